"""How fast the ``sabha`` command starts: medians against a bare interpreter, measured in the same run.

Runs, in interleaved rounds (so a busy machine slows every command alike), 20 times each:

* ``python -c pass``: the bare interpreter, the floor;
* ``sabha --help``: building the parser, nothing else;
* ``sabha ask --role critic hi`` on the offline model: a whole turn (config, state db, soul,
  prompt, transcript);
* ``sabha souls``: reading the workspace.

It prints each command's median wall time, its median over the bare interpreter and the
ratio, against the goals (``--help`` within 0.15 s of the bare interpreter, ``ask`` within
0.3 s, ``souls`` within 0.2 s), then which heavy libraries each command imported (from ``sys.modules`` at exit,
via ``python -X importtime``). It never asserts: timings on a shared machine are figures,
not verdicts. Nothing is cached between runs; each run is a fresh process (with Python's own
``.pyc`` files, as an installed ``sabha`` has them: ``PYTHONDONTWRITEBYTECODE`` is unset).

    python benchmarks/cli_start.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("telegram", "anthropic", "openai", "aiohttp", "jinja2", "jsonschema", "pydantic", "yaml", "aiosqlite",
         "prompt_toolkit", "watchfiles", "prometheus_client", "telegramify_markdown", "pypdf")
GOALS = {"sabha --help": 0.15, "sabha ask --role critic hi": 0.30, "sabha souls": 0.20}


def sabha_command() -> list[str]:
    """The installed console script beside this interpreter, else ``python -m bot.cli``."""
    script = Path(sys.executable).with_name("sabha")
    return [str(script)] if script.exists() else [sys.executable, "-m", "bot.cli"]


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed


def heavy_imports(argv: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    """Top-level packages from HEAVY that the command imported (``-X importtime``)."""
    if argv[0].endswith("sabha"):
        argv = [sys.executable, "-m", "bot.cli", *argv[1:]]
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    names = set(re.findall(r"\|\s+([A-Za-z_][\w]*)(?:\.|$)", done.stderr, re.MULTILINE))
    return [name for name in HEAVY if name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="sabha-start-"))
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    # An installed sabha has its .pyc files (pip writes them): let the warm-up run write any that
    # are missing or stale, or every run would compile the edited modules again.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sabha = sabha_command()
    board = tmp / "board"
    subprocess.run([*sabha, "init", str(board)], env=env, check=True, stdout=subprocess.DEVNULL)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "sabha --help": [*sabha, "--help"],
        "sabha ask --role critic hi": [*sabha, "ask", "--role", "critic", "hi"],
        "sabha souls": [*sabha, "souls"],
    }
    try:
        for argv in commands.values():  # warm the file cache once
            timed(argv, board, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv, board, env))
        base = statistics.median(times["python -c pass"])
        print(f"CLI start-up, median of {args.runs} runs each, interleaved ({os.cpu_count()} CPUs, "
              f"Python {sys.version.split()[0]}):")
        print(f"{'command':<30} {'median s':>9} {'over bare s':>12} {'x bare':>7}  goal")
        for name, values in times.items():
            median = statistics.median(values)
            goal = GOALS.get(name)
            met = goal is not None and median - base <= goal
            verdict = "" if goal is None else f"within {goal:.2f} s: " + ("met" if met else "missed")
            print(f"{name:<30} {median:>9.3f} {median - base:>12.3f} {median / base:>7.1f}  {verdict}")
        print()
        print("heavy libraries imported (of " + ", ".join(HEAVY) + "):")
        for name, argv in commands.items():
            if name != "python -c pass":
                print(f"  {name:<28} {', '.join(heavy_imports(argv, board, env)) or '-'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
