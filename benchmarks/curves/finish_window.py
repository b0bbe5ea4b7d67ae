"""`--finish-before TIME`: a run starts only when its price says it ends before TIME.

On a machine lent for a fixed time whose disk does not outlive the loan, a run still training at the end
is lost, checkpoints and all, however well it resumes. `--start-before` stops starting runs at a time, but
a run started a minute before it may need hours more. This window instead prices each run before it
starts (`plan_cost.run_price`: the arm's own finished runs at that fraction first, then its measured
price, then the modality's runs), less the training an unfinished run already holds in its checkpoints,
and passes over one that would not end in time for the next that would. What it refused is kept, so the
sweep can say which run was too long for the window and by how much.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from benchmarks.curves.early_stopped_run import RunKey
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.plan_cost import MeasuredPrices, everyones_mean, run_price
from benchmarks.evidence.rate_sweep import RunLog


@dataclass
class FinishWindow:
    """Callable as the sweep's `fits`. `deadline`: seconds since the epoch by which a run must end;
    `plans`: every modality's plan (the last resort of a price is every modality's runs); `done`: the
    seconds of training an unfinished run's checkpoint holds, by its log name (`unfinished_runs`)."""

    deadline: float
    log: RunLog
    plans: Sequence[ModalityPlan]
    measured: MeasuredPrices
    done: Mapping[str, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    refused: dict[str, float] = field(default_factory=dict)  # log name → seconds it would still need

    def seconds_left(self, plan: ModalityPlan, arm: Arm, key: RunKey) -> float:
        """The run's price, less what an unfinished run of it already trained."""
        self.log.refresh()
        rows = list(self.log.runs.values())
        _, price = run_price(plan, arm, key.fraction, rows, everyones_mean(self.plans, rows), self.measured)
        return max(price - self.done.get(self.log.name(key), 0.0), 0.0)

    def __call__(self, plan: ModalityPlan, arm: Arm, key: RunKey) -> bool:
        if arm.is_floor:  # a floor's fit takes seconds
            return self.clock() < self.deadline
        needs = self.seconds_left(plan, arm, key)
        if self.clock() + needs <= self.deadline:
            self.refused.pop(self.log.name(key), None)
            return True
        self.refused[self.log.name(key)] = needs
        return False

    def summary(self) -> str:
        """Which runs were too long for the window, the shortest first; "" when none was."""
        if not self.refused:
            return ""
        left = max(self.deadline - self.clock(), 0.0)
        shortest = sorted(self.refused.items(), key=lambda item: item[1])
        runs = "; ".join(f"{name} needs {seconds / 3600:.1f} h" for name, seconds in shortest[:3])
        more = f" and {len(shortest) - 3} more" if len(shortest) > 3 else ""
        return (
            f"{len(shortest)} {'run' if len(shortest) == 1 else 'runs'} too long for the {left / 3600:.1f} h "
            f"left: {runs}{more}. Give a later time, or run them where the machine is held longer."
        )
