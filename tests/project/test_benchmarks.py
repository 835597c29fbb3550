"""Every benchmark runs (issue 44): each script in ``benchmarks/`` is run at its smallest size, so none can rot.

Four of them were broken or stale on main before this test existed (a removed ``StateDB.transaction``, a web
cookie whose session was never stored, a streamed answer finished by an edit the benchmark did not read, a
private attribute of the knowledge index), and nothing noticed. The scripts are found by glob, so a new one is
run too. How small: a script that takes ``--quick`` is run with it (the convention: a new benchmark takes it);
one that does not yet is run with the size flags in :data:`SMALLEST`; a script that reads no arguments at all
has one size. Anything else fails here, naming the script. The figures are not read: a benchmark prints
numbers and asserts nothing about time; what is checked is that it ends with code 0 and printed them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if not p.name.startswith("_"))
#: A bound for a hung benchmark only (the smallest sizes take seconds to a few minutes on a loaded machine).
HUNG_S = 1800

#: The smallest size of the scripts that take no ``--quick`` (yet): their own size flags.
SMALLEST: dict[str, list[str]] = {
    "blob_usage.py": ["--files", "200", "--rounds", "2"],
    "burst.py": ["--chats", "4", "--per-chat", "2", "--model-latency", "0.05", "--settle", "0.2"],
    "image_memory.py": ["--pictures", "2", "--senders", "1", "--side", "800", "--settle", "0.5"],
    "media.py": ["--notes", "2", "--conversations", "2", "--big-mb", "1", "--transcribe", "0.05", "--chat", "0.05"],
    "media_quota_check.py": ["--rows", "500", "--senders", "10", "--rounds", "2"],
    "media_refused.py": ["--strangers", "1", "--each", "1", "--mb", "1"],
    "media_voice.py": ["--turns", "2", "--transcribe-latency", "0.05", "--model-latency", "0.05"],
    "meeting.py": ["--runs", "1", "--latency", "0.01"],
    "recall.py": ["--meetings", "50", "--predictions", "50", "--runs", "2"],
    "replicas.py": ["--conversations", "4", "--per", "2", "--latency", "0.05", "--repeats", "1"],
    "soak.py": ["--chats", "4", "--messages", "40", "--prefill", "100", "--latency", "0.01", "--timeout", "240"],
    "tools.py": ["--calls", "10", "--turns", "5"],
    "webhook.py": ["--count", "40", "--clients", "4", "--users", "4", "--latency", "0.01", "--rounds", "1"],
    "webhook_steady.py": ["--rate", "50", "--count", "40", "--users", "4", "--latency", "0.01", "--rounds", "1"],
}


#: Run at their smallest size by a test of their own, which also reads what they print: not run twice here.
RUN_ELSEWHERE = {
    "recall.py": "tests/project/test_benchmarks_scale.py",
    "scale.py": "tests/project/test_benchmarks_scale.py",
    "webhook.py": "tests/project/test_benchmark_webhook.py",
}


def cases() -> list[object]:
    return [pytest.param(p, id=p.name) for p in BENCHMARKS if p.name not in RUN_ELSEWHERE]


def smallest(script: Path) -> list[str]:
    """The arguments that run ``script`` at its smallest size (see the module docstring)."""
    source = script.read_text(encoding="utf-8")
    if '"--quick"' in source:
        return ["--quick"]
    if script.name in SMALLEST:
        return SMALLEST[script.name]
    if "argparse" not in source and "sys.argv" not in source:
        return []
    raise AssertionError(f"benchmarks/{script.name} takes arguments but no --quick: give it one (its smallest "
                         "size, so that this test can run it)")


def test_every_benchmark_is_found_and_the_table_names_only_scripts_that_exist() -> None:
    names = {p.name for p in BENCHMARKS}
    assert len(names) >= 20 and "cli_start.py" in names and "run_start.py" in names
    assert set(SMALLEST) <= names, set(SMALLEST) - names
    assert set(RUN_ELSEWHERE) <= names, set(RUN_ELSEWHERE) - names
    for name, test in RUN_ELSEWHERE.items():  # the test named runs it, at its --quick size
        assert (REPO / test).is_file() and name in (REPO / test).read_text(encoding="utf-8"), (name, test)
        assert smallest(REPO / "benchmarks" / name) == ["--quick"], name


@pytest.mark.parametrize("script", cases())
def test_the_benchmark_runs_at_its_smallest_size(script: Path, tmp_path: Path) -> None:
    argv = [sys.executable, str(script), *smallest(script)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(REPO), XDG_DATA_HOME=str(tmp_path / "xdg"))
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HUNG_S, check=False)
    assert done.returncode == 0, (f"{' '.join(argv[1:])} ended with {done.returncode}:\n{done.stdout[-2000:]}\n"
                                  f"{done.stderr[-4000:]}")
    assert any(ch.isdigit() for ch in done.stdout), f"{script.name} printed no figures:\n{done.stdout[-2000:]}"
