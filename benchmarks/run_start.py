"""How much the daemon spends before it is ready: ``sabha run`` to ``/readyz`` 200, in CPU and in wall time.

Starts ``sabha run`` on a fresh board (``sabha init``: the embedded defaults, SQLite, the offline
model, no channel but the web page), polls ``GET /readyz`` until it answers 200, and then reads the
daemon's own CPU time (user + system, from ``/proc/<pid>/stat``): a figure that holds on a busy
machine, unlike the wall time, which is printed too ("under load" when the machine is shared).
Each run is a fresh process on a fresh board; Python's ``.pyc`` files are kept, as an installed
``sabha`` has them.

With ``--baseline <checkout>`` the same is measured for another checkout (e.g. main) in the same
run, runs interleaved, and the ratio printed. ``--importtime`` adds the top modules of one start
by ``-X importtime`` (self time summed per top-level package).

    python benchmarks/run_start.py [--runs 7] [--baseline /path/to/main] [--importtime] [--openai]
    python benchmarks/run_start.py --quick
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent
GOAL_CPU_S = 1.0
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Start:
    """One start: the daemon's CPU seconds and the wall seconds when ``/readyz`` first said 200."""

    cpu_s: float
    wall_s: float


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process, from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


#: ``--openai``: the board's model an OpenAI-compatible server (never called here: nothing is asked).
OPENAI = ("llm:\n  model: openai:gpt-4o-mini\n  providers:\n    openai:\n      api_key: bench-key\n"
          "      base_url: http://127.0.0.1:9/v1\n")


def make_board(repo: Path, folder: Path, env: dict[str, str], *, openai: bool = False) -> Path:
    """A fresh ``sabha init`` board whose server listens on a free port; its config file."""
    subprocess.run([sys.executable, "-m", "bot.cli", "init", str(folder)], env={**env, "PYTHONPATH": str(repo)},
                   check=True, stdout=subprocess.DEVNULL)
    config = folder / "sabha.yaml"
    text = config.read_text()
    if openai:
        text = re.sub(r"^llm:\n  model: .*\n", "", text, flags=re.MULTILINE) + "\n" + OPENAI
    config.write_text(text + f"\nserver:\n  host: 127.0.0.1\n  port: {free_port()}\n")
    return config


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start_once(repo: Path, work: Path, env: dict[str, str], *, extra: tuple[str, ...] = (),
               timeout: float = 120.0, openai: bool = False) -> tuple[Start, str]:
    """Start ``sabha run`` from ``repo`` on a fresh board, wait for ``/readyz`` 200, stop it."""
    folder = Path(tempfile.mkdtemp(prefix="board-", dir=work))
    config = make_board(repo, folder, env, openai=openai)
    port = int(re.findall(r"port: (\d+)", config.read_text())[-1])
    argv = [sys.executable, *extra, "-m", "bot.cli", "--config", str(config), "run"]
    log = folder / "stderr.log"  # a file, not a pipe: -X importtime writes more than a pipe holds
    began = time.perf_counter()
    with log.open("wb") as err:
        process = subprocess.Popen(argv, env={**env, "PYTHONPATH": str(repo)}, cwd=folder,
                                   stdout=subprocess.DEVNULL, stderr=err)
    try:
        while not ready(port):
            if process.poll() is not None:
                raise SystemExit(f"sabha run from {repo} exited {process.returncode}: {log.read_text()[-800:]}")
            if time.perf_counter() - began > timeout:
                raise SystemExit(f"sabha run from {repo} not ready within {timeout:.0f} s")
            time.sleep(0.005)
        start = Start(cpu_seconds(process.pid), time.perf_counter() - began)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return start, log.read_text(errors="replace")


def import_top(repo: Path, work: Path, env: dict[str, str], count: int, *,
               openai: bool = False) -> list[tuple[str, float]]:
    """The top-level packages by import self time (ms) of one start to ready: the lines before the daemon logs
    "sabha ... running" (what it imports once ready, the model SDKs, is not the start's)."""
    _, err = start_once(repo, work, env, extra=("-X", "importtime"), openai=openai)
    before_ready = re.split(r"^.*sabha \S+ running.*$", err, maxsplit=1, flags=re.MULTILINE)[0]
    spent: collections.Counter[str] = collections.Counter()
    for match in re.finditer(r"^import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", before_ready, re.MULTILINE):
        spent[match[2].split(".")[0]] += int(match[1])
    total = sum(spent.values())
    return [("(all)", total / 1000), *((name, us / 1000) for name, us in spent.most_common(count))]


def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="sabha-run-start-"))
    env = {**os.environ, "XDG_DATA_HOME": str(work / "xdg")}
    env.pop("SABHA_CONFIG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: .pyc files written once, then used
    repos = {"this": REPO}
    if args.baseline:
        repos["baseline"] = Path(args.baseline).resolve()
    try:
        for repo in repos.values():  # warm the file cache and the .pyc files
            start_once(repo, work, env, openai=args.openai)
        starts: dict[str, list[Start]] = {name: [] for name in repos}
        for _ in range(args.runs):
            for name, repo in repos.items():
                starts[name].append(start_once(repo, work, env, openai=args.openai)[0])
        report(args, repos, starts)
        if args.importtime:
            for name, repo in repos.items():
                print(f"\n-X importtime, {name} ({repo}): self time per top-level package, ms")
                for package, ms in import_top(repo, work, env, args.top, openai=args.openai):
                    print(f"  {package:<28} {ms:8.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(args: argparse.Namespace, repos: dict[str, Path], starts: dict[str, list[Start]]) -> None:
    board = "an OpenAI model (--openai)" if args.openai else "the embedded defaults (offline model, SQLite, web)"
    print(f"sabha run to /readyz 200 on {board}, median of {args.runs} (interleaved; {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}; wall figures measured under whatever load the machine has)")
    print(f"{'checkout':<10} {'CPU s':>7} {'wall s':>7}  goal: CPU under {GOAL_CPU_S:.1f} s")
    cpu = {name: statistics.median(s.cpu_s for s in values) for name, values in starts.items()}
    for name, values in starts.items():
        wall = statistics.median(s.wall_s for s in values)
        verdict = "met" if cpu[name] < GOAL_CPU_S else "missed"
        print(f"{name:<10} {cpu[name]:>7.3f} {wall:>7.3f}  {verdict}   ({repos[name]})")
    if "baseline" in cpu:
        ratios = [a.cpu_s / b.cpu_s for a, b in zip(starts["this"], starts["baseline"], strict=True)]
        print(f"CPU this/baseline: {cpu['this'] / cpu['baseline']:.2f} (paired runs: median "
              f"{statistics.median(ratios):.2f}, {min(ratios):.2f}-{max(ratios):.2f})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", help="another checkout measured in the same run (e.g. main)")
    parser.add_argument("--importtime", action="store_true", help="also the top imports of one start")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--openai", action="store_true", help="the board's model on OpenAI (its SDK to import)")
    parser.add_argument("--quick", action="store_true", help="one run (a test runs every benchmark so)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 1
    run(args)


if __name__ == "__main__":
    main()
