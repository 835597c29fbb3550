"""What the memory's secret filter costs: CPU a fact, CPU to import it, CPU to import it and load the learned model.

    python benchmarks/secret_filter.py [--baseline /work/main] [--rounds 2] [--quick]

Each checkout is measured in fresh subprocesses (its own ``board`` on ``sys.path``), alternating in one run so both see
the same load: a fact's CPU is the best of three passes over the labelled rows of ``tests/data/memory_secrets*.jsonl``
(the held-out pins blind11 to blind14 left out), and over the harmless rows alone (most facts a person tells are
harmless, and a fact a rule refuses is never scored by the model); import and first-fact figures are medians of five
fresh processes.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PROBE = r"""
import glob, json, sys, time
tree, what, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, tree)
t0 = time.process_time()
import board.language.secrets as filt
if what == "import":
    print(time.process_time() - t0); sys.exit()
filt.secret_reason("note", "likes tea")  # the first fact loads the learned model
if what == "first":
    print(time.process_time() - t0); sys.exit()
rows = []
for f in sorted(glob.glob(f"{tree}/tests/data/memory_secrets*.jsonl")):
    if any(f"blind{n}." in f for n in (11, 12, 13, 14)):
        continue
    rows += [json.loads(line) for line in open(f, encoding="utf-8") if line.strip()]
rows = rows[:most] if most else rows
def best(rows):
    least = 1e9
    for _ in range(3):
        t0 = time.process_time()
        for r in rows:
            filt.sentence_reason(r["value"]) if r["key"] is None else filt.secret_reason(r["key"], r["value"])
        least = min(least, time.process_time() - t0)
    return least / len(rows)
harmless = [r for r in rows if not r["secret"]]
print(best(rows), len(rows), best(harmless), len(harmless))
"""


def probe(tree: Path, what: str, most: int = 0) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tree), what, str(most)], capture_output=True, text=True,
                          env=env, cwd=tree, check=True)
    return done.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout measured in the same run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true",
                        help="the smallest size (one round, the first 200 rows, one process for each import figure)")
    args = parser.parse_args()
    most, fresh = (200, 1) if args.quick else (0, 5)
    if args.quick:
        args.rounds = 1
    trees = [HERE, *([args.baseline.resolve()] if args.baseline else [])]
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    for _ in range(args.rounds):
        for tree in trees:
            per_fact, rows, per_harmless, harmless = probe(tree, "facts", most)
            imports = statistics.median(float(probe(tree, "import")[0]) for _ in range(fresh))
            first = statistics.median(float(probe(tree, "first")[0]) for _ in range(fresh))
            print(f"{tree}: {rows} rows, CPU {float(per_fact) * 1e6:.0f} us a fact (best of 3), "
                  f"{float(per_harmless) * 1e6:.0f} us a harmless fact ({harmless}); import CPU median "
                  f"{imports * 1000:.0f} ms; import + model load (first fact) median {first * 1000:.0f} ms")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
