"""How many instances a multi-GPU kernel runs per second on N GPUs as a function of the lanes
(instances in flight at once on each GPU), and whether a lane count lets a round hang (the
partner of a spinning instance held back): each setting in a process of its own under the
watchdog (device/kernel_run.run_isolated). Usage: python3 multigpu_lanes.py KERNEL.cu [LANES...]"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    from ptxmm.device import kernel_cross as KC
    from ptxmm.device.kernel_ranks import rank_child
    from ptxmm.device.kernel_run import KernelEnv, KernelHung, run_isolated

    path, lanes = Path(sys.argv[1]), [int(x) for x in sys.argv[2:]] or [1, 8, 32]
    job = KC.plan_kernel_file(path, "ptx", 2, allow_hang=True)
    assert isinstance(job, KC.KernelJob), job
    rows = []
    for n in lanes:
        try:
            run = run_isolated(job.kplan, KernelEnv(1024, n), 1.0, None, 10.0, job.cubin, target=rank_child)
            kc = KC.judge(job.kplan, run)
            rows.append({"lanes": n, "instances": run.instances, "per_s": round(run.per_s),
                         "violations": len(kc.violations), "states": len([r for r in kc.rows if r.count])})
        except KernelHung as e:
            rows.append({"lanes": n, "hung": e.message})
        print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
