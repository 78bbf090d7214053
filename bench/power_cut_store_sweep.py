"""Store-level power cuts: N seeds of tests/support/store_power_cut_sim.py (a partition log on
real files under the chaos harness's LazyDisk layer, cut at a drawn moment, reopened and
checked). Prints one JSON line: seeds, failures and the first few failure messages.

    python bench/power_cut_store_sweep.py --seeds 500
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from store_power_cut_sim import run_seed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=100)
    p.add_argument("--first", type=int, default=1)
    args = p.parse_args()
    started = time.monotonic()
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first, args.first + args.seeds):
            problem = run_seed(seed, Path(tmp) / f"seed-{seed}")
            if problem is not None:
                failures.append(problem)
    print(
        json.dumps(
            {
                "seeds": args.seeds,
                "first": args.first,
                "failures": len(failures),
                "examples": failures[:5],
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
