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

With ``--baseline <checkout>`` every command is run from that checkout too (e.g. main), in the same
interleaved rounds, and each command's median over bare is printed for both, with the ratio.
``--importtime`` adds each command's top imports (self time summed per top-level package, one run).

    python benchmarks/cli_start.py [--runs 20] [--baseline /path/to/main] [--importtime]
    python benchmarks/cli_start.py --quick
"""

from __future__ import annotations

import argparse
import collections
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


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: the process's user + system, from ``wait4``) of one run."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - began
        if process.returncode not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {err.read().decode()[-400:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def importtime(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """The command's ``-X importtime`` report (its stderr)."""
    if argv[0].endswith("sabha"):
        argv = [sys.executable, "-m", "bot.cli", *argv[1:]]
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    return done.stderr


def heavy_imports(argv: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    """Top-level packages from HEAVY that the command imported (``-X importtime``)."""
    names = set(re.findall(r"\|\s+([A-Za-z_][\w]*)(?:\.|$)", importtime(argv, cwd, env), re.MULTILINE))
    return [name for name in HEAVY if name in names]


def top_imports(argv: list[str], cwd: Path, env: dict[str, str], count: int = 10) -> list[tuple[str, float]]:
    """(package, ms): the import self time summed per top-level package, the ``count`` largest, after the total."""
    spent: collections.Counter[str] = collections.Counter()
    for match in re.finditer(r"^import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", importtime(argv, cwd, env), re.MULTILINE):
        spent[match[2].split(".")[0]] += int(match[1])
    return [("(all)", sum(spent.values()) / 1000), *((n, us / 1000) for n, us in spent.most_common(count))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--baseline", help="another checkout run in the same rounds (e.g. main)")
    parser.add_argument("--importtime", action="store_true", help="also each command's top imports (one run)")
    parser.add_argument("--quick", action="store_true", help="two runs each (a test runs every benchmark so)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 2

    tmp = Path(tempfile.mkdtemp(prefix="sabha-start-"))
    base_env = {**os.environ, "XDG_DATA_HOME": str(tmp / "xdg")}
    base_env.pop("SABHA_CONFIG", None)
    # An installed sabha has its .pyc files (pip writes them): let the warm-up run write any that
    # are missing or stale, or every run would compile the edited modules again.
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    repos = {"this": REPO, **({"baseline": Path(args.baseline).resolve()} if args.baseline else {})}
    envs = {name: {**base_env, "PYTHONPATH": str(repo)} for name, repo in repos.items()}
    sabha = sabha_command()
    board = tmp / "board"
    subprocess.run([*sabha, "init", str(board)], env=envs["this"], check=True, stdout=subprocess.DEVNULL)
    commands = {
        "sabha --help": [*sabha, "--help"],
        "sabha ask --role critic hi": [*sabha, "ask", "--role", "critic", "hi"],
        "sabha souls": [*sabha, "souls"],
    }
    bare = [sys.executable, "-c", "pass"]
    try:
        times = measure(commands, bare, envs, board, args.runs)
        report(times, envs, args.runs)
        print()
        print("heavy libraries imported (of " + ", ".join(HEAVY) + "):")
        for name, argv in commands.items():
            for repo in envs:
                print(f"  {name:<28} {repo:<9} {', '.join(heavy_imports(argv, board, envs[repo])) or '-'}")
        if args.importtime:
            for name, argv in commands.items():
                for repo in envs:
                    tops = top_imports(argv, board, envs[repo])
                    print(f"\n-X importtime, {name}, {repo}: self ms per top-level package")
                    print("  " + ", ".join(f"{package} {ms:.1f}" for package, ms in tops))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(commands: dict[str, list[str]], bare: list[str], envs: dict[str, dict[str, str]], board: Path,
            runs: int) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(wall, CPU) seconds of each (command, checkout) and of the bare interpreter, interleaved rounds."""
    keys = [("python -c pass", "this"), *((name, repo) for name in commands for repo in envs)]
    argv_of = {key: bare if key[0] == "python -c pass" else commands[key[0]] for key in keys}
    for key in keys:  # warm the file cache and the .pyc files once
        timed(argv_of[key], board, envs[key[1]])
    times: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in keys}
    for _ in range(runs):
        for key in keys:
            times[key].append(timed(argv_of[key], board, envs[key[1]]))
    return times


def report(times: dict[tuple[str, str], list[tuple[float, float]]], envs: dict[str, dict[str, str]],
           runs: int) -> None:
    bare = times[("python -c pass", "this")]
    base = statistics.median(t[0] for t in bare)
    base_cpu = statistics.median(t[1] for t in bare)
    print(f"CLI start-up, median of {runs} runs each, interleaved ({os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}, Python {sys.version.split()[0]}): bare interpreter {base:.3f} s wall, "
          f"{base_cpu:.3f} s CPU. Wall times are measured under whatever load the machine has; CPU (user + "
          "system of the process) holds on a busy machine")
    print(f"{'command':<30} {'checkout':<9} {'wall s':>7} {'over bare':>10} {'CPU s':>7} {'over bare':>10}  "
          "goal (wall)")
    for (name, repo), values in times.items():
        if name == "python -c pass":
            continue
        wall = statistics.median(t[0] for t in values)
        cpu = statistics.median(t[1] for t in values)
        goal = GOALS[name]
        verdict = f"within {goal:.2f} s: " + ("met" if wall - base <= goal else "missed")
        print(f"{name:<30} {repo:<9} {wall:>7.3f} {wall - base:>10.3f} {cpu:>7.3f} {cpu - base_cpu:>10.3f}  {verdict}")
        if repo == "baseline":
            this = times[(name, "this")]
            ratio_wall = (statistics.median(t[0] for t in this) - base) / max(wall - base, 1e-9)
            ratio_cpu = (statistics.median(t[1] for t in this) - base_cpu) / max(cpu - base_cpu, 1e-9)
            print(f"{'':<30} {'':<9} this/baseline over bare: wall {ratio_wall:.2f}, CPU {ratio_cpu:.2f}")


if __name__ == "__main__":
    main()
