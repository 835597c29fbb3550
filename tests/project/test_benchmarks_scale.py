"""The read-at-scale benchmarks run at their smallest size (issue 44: "a test runs each benchmark script at its
smallest size so none can rot again"): ``benchmarks/recall.py`` crashed on main with ``TypeError:
StateDB.transaction() takes 1 positional argument but 2 were given``, and ``benchmarks/scale.py`` builds every
history the issue names. Each runs as a subprocess of this checkout (its ``--quick`` size); the test reads the
figures it printed, never a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, f"benchmarks/{script} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_recall_benchmark_runs_at_its_smallest_size() -> None:
    out = _run("recall.py", "--quick")
    figures = {line.split("  ")[0]: line for line in out.splitlines()}
    for name in ("decision recall (framing)", "recall, a member", "recall, the owner", "track records (this checkout)",
                 "track records, recomputed (main)"):
        assert name in figures and "median" in figures[name], out
    assert "(5 found)" in figures["recall, a member"] and "(5 found)" in figures["track records (this checkout)"], out


def test_the_scale_benchmark_reads_every_figure_at_its_smallest_size() -> None:
    out = _run("scale.py", "--quick", "--runs", "1")
    for name in ("web /ui/meetings", "web /ui/meetings/<id>", "web /ui/ (board)", "web /ui/decisions", "web /ui/track",
                 "web /ui/cost", "sabha meetings list", "sabha predictions list", "sabha board stats", "/stats",
                 "track records (a meeting's)", "framing (recall + track records)", "recall (a member)"):
        assert any(line.startswith(name + " ") for line in out.splitlines()), f"{name} missing:\n{out}"
