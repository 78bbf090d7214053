"""Replay one seed with a trace of its last events, or sweep a range of seeds.

Why it exists: a seed that fails in the sweep is a bug report, and this is how it is read.
Run the folder as a script, ``.venv/bin/python tests/unit/broker/replication_sim SEED
[BUG]`` (BUG: a :class:`~.broken_variants.Bug` value), or, with ``tests/unit/broker`` on
the path, ``python -m replication_sim SEED [BUG]``. The exit status is 1 if the run broke
an invariant.

``replication_sim --sweep START COUNT`` runs COUNT seeds from START and prints one JSON
line: seeds run, the failing seeds with their violations, acknowledged batches, and how
often each path was taken (the CI suite runs 400 seeds; this is for the long sweeps).
"""

import json
import sys
import time
from collections import Counter
from pathlib import Path

if not __package__:
    # Run as a folder: Python put this folder itself first on sys.path; the package is
    # importable from its parent.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)
# The in-memory metadata quorum it runs on lives with the other test support code.
sys.path.insert(1, str(Path(__file__).resolve().parents[3] / "support"))

from replication_sim import Bug, run_seed


def sweep(start: int, count: int) -> int:
    started = time.monotonic()
    paths: Counter[str] = Counter()
    failures: dict[int, str] = {}
    acked = events = 0
    for seed in range(start, start + count):
        result = run_seed(seed)
        paths.update(result.stats)
        acked += result.acked
        events += result.events
        if result.violation is not None:
            failures[seed] = result.violation.splitlines()[0]
    print(
        json.dumps(
            {
                "seeds": count,
                "start": start,
                "failures": failures,
                "acked_batches": acked,
                "events": events,
                "elapsed_s": round(time.monotonic() - started, 1),
                "paths": dict(sorted(paths.items())),
            }
        )
    )
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    """Replay a seed with a trace (``SEED [BUG]``) or sweep (``--sweep START COUNT``)."""
    if argv[1] == "--sweep":
        return sweep(int(argv[2]), int(argv[3]))
    seed = int(argv[1])
    bug = Bug(argv[2]) if len(argv) > 2 else None
    result = run_seed(seed, bug, trace=True)
    print("\n".join(result.trace))
    print(
        f"seed {seed}: {result.events} events, {result.end_ms}ms, {result.acked} acked, "
        f"{result.leader_epochs} epochs written"
    )
    print(result.violation or "ok")
    return 1 if result.violation else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
