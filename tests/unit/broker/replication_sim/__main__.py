"""Replay one seed with a trace of its last events.

Why it exists: a seed that fails in the sweep is a bug report, and this is how it is read.
Run the folder as a script, ``.venv/bin/python tests/unit/broker/replication_sim SEED
[BUG]`` (BUG: a :class:`~.broken_variants.Bug` value), or, with ``tests/unit/broker`` on
the path, ``python -m replication_sim SEED [BUG]``. The exit status is 1 if the run broke
an invariant.
"""

import sys
from pathlib import Path

if not __package__:
    # Run as a folder: Python put this folder itself first on sys.path; the package is
    # importable from its parent.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from replication_sim import Bug, run_seed


def main(argv: list[str]) -> int:
    """Replay seeds with a trace of the last events: ``replication_sim SEED [BUG]``."""
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
