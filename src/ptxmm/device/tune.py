"""Per-test environment tuning: try the presets and N random
environments for a short budget each, keep the one with the most condition-satisfying ("weak")
outcomes per second, and remember it per test shape in a JSON cache for `--stress tuned`."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

from ..ir.program import Program
from ..semantics.result import CheckResult
from .build import cache_dir
from .crossval import CrossResult, crossval, prepare
from .env import PRESETS, Env, random_env
from .layout import Layout


@dataclass
class Trial:
    name: str
    result: CrossResult

    @property
    def weak_per_s(self) -> float:
        r = self.result
        return r.weak / r.run.seconds if r.run.seconds else 0.0


def shape_key(prog: Program) -> str:
    """Tests with the same threads, placements and instructions share a tuned environment."""
    text = repr([(t.placement, [i.text for i in t.instrs]) for t in prog.threads])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _store() -> dict:
    p = cache_dir().parent / "envs.json"
    return json.loads(p.read_text()) if p.exists() else {}


def tuned_env(prog: Program) -> Env | None:
    entry = _store().get(shape_key(prog))
    return Env(**entry["env"]) if entry else None


def tune(prog: Program, n: int = 12, budget_s: float = 0.5, model: str = "ptx",
         seed: int = 1, save: bool = True, prepared: tuple[CheckResult | None, Layout] | None = None,
         timeout_s: float = 60.0) -> list[Trial]:
    rng = random.Random(seed)
    envs = list(PRESETS.items()) + [(f"random-{i}", random_env(rng)) for i in range(n)]
    prepared = prepared if prepared and prepared[0] is not None else prepare(prog, model)
    trials = [Trial(name, crossval(prog, env, budget_s, model, prepared=prepared, timeout_s=timeout_s))
              for name, env in envs]
    best = max(trials, key=lambda t: t.weak_per_s)
    if save and best.weak_per_s > 0:
        store = _store()
        store[shape_key(prog)] = {"test": prog.name, "env": best.result.run.env.as_dict(),
                                  "weak_per_s": best.weak_per_s}
        (cache_dir().parent / "envs.json").write_text(json.dumps(store, indent=1))
    return trials
