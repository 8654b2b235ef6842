"""nvcc for the playground in a sandbox: a user and mount namespace (Linux; unprivileged user
namespaces) whose root is a fresh, read-only ``tmpfs`` holding only

* the job's directory, read-write, at its own path (the source, nvcc's output, its ``TMPDIR``:
  no ``tmpxft_*`` file lands in the system's temporary directory);
* the CUDA toolkit the nvcc belongs to (its ``TOP``), read-only, at its own path;
* what nvcc and its host compiler run on, read-only: :data:`BINDS` (``/usr/bin``, the
  libraries, gcc's helpers, ``/usr/include``), ``/bin``, ``/lib``, ``/lib64`` as the host has
  them (symbolic links into ``/usr``, or bound), and ``/dev/null``.

Nothing else: not ``/etc``, ``/home``, ``/root``, ``/tmp`` (but the job's directory), ``/proc``,
``/sys``, ``/usr/local`` or ``/usr/share`` (but the toolkit), the server's files and repository,
the server's environment (nvcc gets
``PATH``, ``HOME``, ``TMPDIR`` and ``LANG`` only), nor the network (a network namespace of its
own, with no interface up). nvcc runs as an ordinary user of the namespace (no capability
survives its ``exec``; ``no_new_privs`` set), in a session of its own, under limits
(:class:`Limits`: CPU seconds, address space, file size, no core file) and a wall time past
which its whole process group is killed.

Where user namespaces are not available (:func:`available` is false) the playground compiles no
``.cu``: it refuses with :data:`UNAVAILABLE` (.ptx and .litmus are still checked)."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import SourcePos
from ..kernel.nvcc import CompileError, running_in

# read-only binds: what nvcc and gcc need (found by trying: without any one of those present here,
# nvcc does not start or gcc fails); a directory the host lacks is left out
BINDS = ("/usr/bin", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
         "/usr/lib/gcc", "/usr/libexec/gcc", "/usr/include")
TOP_LINKS = ("/bin", "/lib", "/lib64")  # as the host has them: links into /usr, or bound
FILES: tuple[str, ...] = ()  # nvcc needs no file of /etc (not even ld.so.cache)
DEVICES = ("/dev/null",)
UNAVAILABLE = ("this server cannot run nvcc in a sandbox (no user namespaces), so it compiles no "
               ".cu source; the playground still checks .ptx and .litmus")
UNAVAILABLE_HINT = "compile the kernel yourself (nvcc -ptx -lineinfo -arch=sm_90) and check its .ptx"
USER = 1000  # nvcc's user id inside (the host's user outside)

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWIPC, _CLONE_NEWUTS = (
    0x00020000, 0x10000000, 0x40000000, 0x08000000, 0x04000000)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_MNT_DETACH = 2
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}


@dataclass(frozen=True)
class Limits:
    """nvcc's limits: ``wall`` seconds before its process group is killed, ``cpu`` seconds of CPU
    time per process, ``memory_mb`` of address space per process, ``file_mb`` per file written."""

    wall: float = 60.0
    cpu: int = 60
    memory_mb: int = 4096
    file_mb: int = 64


class _Libc:
    """The C library's calls the child makes, looked up in the parent (the child, between fork and
    exec, loads nothing)."""

    def __init__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        self.mount, self.umount2, self.unshare = libc.mount, libc.umount2, libc.unshare
        self.prctl, self.syscall = libc.prctl, libc.syscall
        self.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                               ctypes.c_char_p]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


class _Setup:
    """The child's side (between fork and exec): the namespaces, the new root, the limits."""

    def __init__(self, job: Path, toolkit: Path | None, limits: Limits):
        self.job, self.toolkit, self.limits = job, toolkit, limits
        self.uid, self.gid = os.getuid(), os.getgid()
        self.root = job / ".root"
        self.pivot_root = _SYS_PIVOT_ROOT.get(os.uname().machine)
        self.libc = _Libc()

    def __call__(self) -> None:
        libc = self.libc
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC
                            | _CLONE_NEWUTS), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{USER} {self.uid} 1")
        _write("/proc/self/gid_map", f"{USER} {self.gid} 1")
        self._mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        r = str(self.root)
        self._mount("tmpfs", r, "tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,mode=755")
        self._populate(r)
        self._mount(None, r, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.chdir(r)
        _check(libc.syscall(self.pivot_root, b".", b".") if self.pivot_root else -1, "pivot_root")
        _check(libc.umount2(b".", _MNT_DETACH), "umount")
        os.chdir(self.job)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        self._limits()

    def _populate(self, r: str) -> None:
        for link in TOP_LINKS:
            if os.path.islink(link):
                os.symlink(os.readlink(link), r + link)
            elif os.path.isdir(link):
                self._bind(link, r, True)
        for src in (*BINDS, *([str(self.toolkit)] if self.toolkit else [])):
            if os.path.isdir(src) and not os.path.islink(src):
                self._bind(src, r, True)
        for f in (*FILES, *DEVICES):
            if os.path.exists(f):
                self._bind(f, r, True, directory=False)
        self._bind(str(self.job), r, False)

    def _bind(self, src: str, r: str, readonly: bool, directory: bool = True) -> None:
        dst = r + src
        if os.path.exists(dst):
            return  # already there (a toolkit under a bound directory)
        os.makedirs(dst if directory else os.path.dirname(dst), exist_ok=True)
        if not directory:
            with open(dst, "w"):
                pass
        self._mount(src, dst, None, _MS_BIND)
        flags = _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _locked(src)
        self._mount(None, dst, None, flags | (_MS_RDONLY if readonly else 0))

    def _mount(self, src, dst, fstype, flags, data=None) -> None:
        _check(self.libc.mount(_enc(src), _enc(dst), _enc(fstype), flags, data), f"mount {dst}")

    def _limits(self) -> None:
        lim = self.limits
        for what, value in ((resource.RLIMIT_CPU, lim.cpu), (resource.RLIMIT_AS, lim.memory_mb << 20),
                            (resource.RLIMIT_FSIZE, lim.file_mb << 20), (resource.RLIMIT_CORE, 0)):
            hard = resource.getrlimit(what)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(what, (value, value))


def _enc(s: str | bytes | None) -> bytes | None:
    return s.encode() if isinstance(s, str) else s


def _locked(path: str) -> int:
    """The flags of the mount ``path`` is on that a user namespace may not clear."""
    f = os.statvfs(path).f_flag
    out = 0
    for st, ms in ((os.ST_NODEV, _MS_NODEV), (os.ST_NOEXEC, _MS_NOEXEC), (os.ST_RDONLY, _MS_RDONLY),
                   (os.ST_NOATIME, _MS_NOATIME), (os.ST_NODIRATIME, _MS_NODIRATIME),
                   (os.ST_RELATIME, _MS_RELATIME)):
        if f & st:
            out |= ms
    return out


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def run(cmd: list[str], job: Path, toolkit: Path | None, limits: Limits,
        file: str = "playground.cu") -> subprocess.CompletedProcess:
    """``cmd`` (nvcc's command line) in the sandbox, in ``job`` (a directory of its own, which
    the command may write): its exit code and output, or a :class:`CompileError` at the wall
    time (its whole process group killed) or when the sandbox cannot be set up."""
    job = job.resolve()
    if toolkit and (toolkit / "bin" / "nvcc").is_file() and Path(cmd[0]).name == "nvcc":
        cmd = [str(toolkit / "bin" / "nvcc"), *cmd[1:]]  # not a wrapper outside the sandbox
    tmp = job / ".tmp"
    (job / ".root").mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(job), "TMPDIR": str(tmp), "LANG": "C"}
    if toolkit:
        env["PATH"] = f"{toolkit}/bin:" + env["PATH"]
    try:
        proc = subprocess.Popen(cmd, cwd=job, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True, preexec_fn=_Setup(job, toolkit, limits))
    except (OSError, subprocess.SubprocessError) as e:
        raise CompileError(f"the sandbox for nvcc could not be set up: {e}", SourcePos(file, 1, 1),
                           UNAVAILABLE_HINT) from None
    pgid = job / ".pgid"
    pgid.write_text(str(proc.pid))  # for the pool, should it end this worker first
    try:
        out, err = proc.communicate(timeout=limits.wall)
    except subprocess.TimeoutExpired:
        raise CompileError(f"nvcc took more than {limits.wall:.1f} s (the playground's limit) on {file}",
                           SourcePos(file, 1, 1), "a kernel compiles in a second or two") from None
    finally:
        _kill(proc)  # on time, anything it left running
        pgid.unlink(missing_ok=True)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@contextlib.contextmanager
def compiling(job: Path, limits: Limits, file: str, cache=None, source: str = ""):
    """Within: :func:`ptxmm.kernel.nvcc.compile_cu` runs nvcc in the sandbox of ``job``, its
    temporary files in it; behind ``cache`` (a :class:`ptxmm.web.compile_cache.CompileCache`,
    keyed by ``source``), when given."""
    from .kernel_source import cuda_include

    top = cuda_include()
    toolkit = top.parent.resolve() if top else None
    (job / ".tmp").mkdir(exist_ok=True)

    def boxed(cmd: list[str]) -> subprocess.CompletedProcess:
        return run(cmd, job, toolkit, limits, file)

    with running_in(cache.runner(boxed, job, source, file) if cache else boxed, job / ".tmp"):
        yield


def _kill(proc: subprocess.Popen) -> None:
    """Kill ``proc``'s process group and wait (at most a second) until none of it is left."""
    kill_group(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=5)
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@functools.cache
def available() -> bool:
    """Whether a command runs in the sandbox here (a user namespace can be made and mounted in)."""
    import tempfile

    if os.environ.get("PTXMM_NO_SANDBOX"):
        return False
    with tempfile.TemporaryDirectory(prefix="ptxmm-sandbox-probe-") as d:
        try:
            return run(["/bin/sh", "-c", "exit 0"], Path(d), None, Limits(wall=30)).returncode == 0
        except (CompileError, OSError):
            return False
