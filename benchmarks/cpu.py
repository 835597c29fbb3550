"""The CPU a message costs the daemon: CPU seconds (user + system) per answered message, not wall time.

CPU time holds on a busy machine where wall time does not, so this is the figure to compare while others run.
Each kind is measured on this checkout and on a baseline checkout (``--baseline``, default /work/main) in the
same run, interleaved (``--rounds``), and the medians and the ratio this / baseline are printed:

* ``chat``: a chat turn with an instant model. A real ``sabha run`` (WhatsApp on the fake Graph API, the fake
  OpenAI API answering at once, no streaming) gets ``--messages`` signed webhooks one after another from one
  person, each sent once the previous one's reply reached the fake Graph API. The daemon's CPU (from
  ``/proc/<pid>/stat``) over them, less its idle CPU over the same wall time (measured just before), over the
  number of messages. This is the whole life of a message: the webhook, the intake, the board, the model
  client, the delivery.
* ``tool``: the same, but the model first calls the ``recall`` tool (Sabha searches its history) and answers
  after the result: a turn with a tool round (two model calls).
* ``webhook``: the acknowledgement alone: the turn cap is 1 and the first message's model call is held, so
  every later webhook is verified, stored and queued (answered 200) and its turn does not start. CPU per
  acknowledged webhook. (The ``ack`` developer's area: measured here, cut there.)
* ``turn``: the board's own chat turn, in process (issue 44's "inside the board"): ``Board.handle`` of
  ``--messages`` x 10 console messages in one conversation, with a scripted model that answers at once
  (``tests/support/fakes/scripted_model``), after 5 warm-up turns. The CPU of the process (``process_time``, every
  thread: the database's included) per turn. Each checkout is run in its own subprocess with its own ``sys.path``.
* ``meeting``: a board meeting of six seats and three rounds, in process (the offline model, its own CPU
  measured on its thread and not counted: that is the model's, not Sabha's); Sabha's CPU (``process_time``,
  every thread) over the meeting's seat calls (ledger rows of purpose ``meeting``).

``--statements`` also counts the SQL statements the daemon runs per message (``chat``, ``tool``, ``webhook``): each
is a round trip to a database thread, so the count is a figure of its own (a trace callback on every SQLite
connection, ``benchmarks/statements/sitecustomize.py``; it writes a line per statement, so the CPU figures of such
a run are a little higher than without it).

Run: python benchmarks/cpu.py [--messages 40] [--rounds 3] [--baseline /work/main] [--statements] [--quick]
Prints figures; asserts nothing on time. ``--quick`` runs each kind once with a few messages (for a test).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for _child in ("--meeting-child", "--turn-child"):
    if __name__ == "__main__" and _child in sys.argv:
        sys.path.insert(0, sys.argv[sys.argv.index(_child) + 1])  # the checkout measured
sys.path.insert(1, str(REPO))

from aiohttp import ClientSession, ClientTimeout  # noqa: E402

__all__ = ["main"]

KINDS = ("chat", "tool", "webhook", "turn", "meeting")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass(frozen=True)
class Figure:
    """CPU and wall seconds per message of one kind, one checkout, one round."""

    cpu: float
    wall: float
    messages: int
    statements: float | None = None  # SQL statements per message (``--statements``), None when not counted


# -- a real sabha run ------------------------------------------------------------------------


STATEMENTS_SITE = REPO / "benchmarks" / "statements"


def _lines(path: Path | None) -> int:
    return path.read_text(encoding="utf-8").count("\n") if path is not None and path.exists() else 0


async def _daemon_kind(repo: Path, kind: str, messages: int, statements: bool = False) -> Figure:
    from benchmarks_webhook import TARGETS, post_signed, spawn, user_id, write_config  # type: ignore[import-not-found]

    from tests.support.fakes.openai_api import FakeOpenAI

    target = TARGETS["whatsapp"]
    root = Path(tempfile.mkdtemp(prefix=f"sabha-cpu-{kind}-"))
    async with target.fake() as graph, FakeOpenAI() as model:
        env = write_config(root, target, graph, model, 2, 1 if kind == "webhook" else 8)  # type: ignore[arg-type]
        env["PYTHONPATH"] = str(repo)
        trace = root / "statements.log" if statements else None
        if trace is not None:
            env["PYTHONPATH"] = f"{repo}{os.pathsep}{STATEMENTS_SITE}"
            env["SABHA_BENCH_STATEMENTS"] = str(trace)
        proc, port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config", str(root / "sabha.yaml")],
                                 env, root)
        url = f"http://127.0.0.1:{port}{target.path}"
        sent = lambda: sum(1 for _ in target.texts(graph))  # noqa: E731
        try:
            async with ClientSession(timeout=ClientTimeout(total=120)) as http:
                async def ask(text: str, user: int = 0) -> None:
                    before = sent()
                    await post_signed(http, url, target.body(graph, user_id(target, user), text), target.headers)
                    await _until(lambda: sent() > before)

                for i in range(3):  # warm: the SDK's first-call paths, the soul files, the session
                    model.script_tool_call("recall", {"query": "prices"})
                    model.script_text(f"warm {i}")
                    await ask(f"warm up {i}: look it up")
                await asyncio.sleep(0.5)
                start_cpu, start = cpu_of(proc.pid), time.perf_counter()
                await asyncio.sleep(1.0)
                idle = (cpu_of(proc.pid) - start_cpu) / (time.perf_counter() - start)
                if kind == "webhook":
                    counted = _lines(trace)
                    acks = await _acks(http, url, target, graph, model, proc.pid, idle, messages)
                    return replace(acks, statements=(_lines(trace) - counted) / messages if trace else None)
                start_cpu, start = cpu_of(proc.pid), time.perf_counter()
                counted = _lines(trace)
                for i in range(messages):
                    if kind == "tool":
                        model.script_tool_call("recall", {"query": f"prices {i}"})
                        model.script_text(f"answer {i} after looking it up")
                    await ask(f"Q{i:03d} what should we do about prices?")
                wall = time.perf_counter() - start
                used = cpu_of(proc.pid) - start_cpu - idle * wall
                count = None
                if trace is not None:
                    await asyncio.sleep(0.2)  # the last reply's own bookkeeping (its outcome) lands
                    count = (_lines(trace) - counted) / messages
                return Figure(used / messages, wall / messages, messages, count)
        finally:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _acks(http: ClientSession, url: str, target: Any, graph: Any, model: Any, pid: int, idle: float,
                messages: int) -> Figure:
    """CPU per acknowledged webhook while the one turn slot is held (see the module docstring)."""
    from benchmarks_webhook import post_signed, user_id

    model.script_delay(60.0, model.text_reply("held"))
    asked = len(model.requests)
    await post_signed(http, url, target.body(graph, user_id(target, 1), "hold the slot"), target.headers)
    await _until(lambda: len(model.requests) > asked)  # the one turn slot waits at the model from now on
    start_cpu, start = cpu_of(pid), time.perf_counter()
    for i in range(messages):
        await post_signed(http, url, target.body(graph, user_id(target, 0), f"W{i:03d} queued"), target.headers)
    wall = time.perf_counter() - start
    used = cpu_of(pid) - start_cpu - idle * wall
    return Figure(used / messages, wall / messages, messages)


async def _until(check: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"not done within {timeout:.0f} s")
        await asyncio.sleep(0.005)


# -- a meeting, in process -------------------------------------------------------------------


async def _meeting_child(rounds: int) -> dict[str, float]:
    from board.agent.runner import AgentSettings
    from board.app import Board, BoardSettings
    from board.llm.base import LLMRequest, LLMResponse
    from board.llm.offline import OfflineProvider
    from board.llm.registry import ProviderRegistry
    from board.roles import RosterSpec
    from board.room.meeting import MeetingSettings
    from board.workspace.paths import copy_default_workspace

    class Measured(OfflineProvider):
        own = 0.0

        async def complete(self, request: LLMRequest) -> LLMResponse:
            cpu = time.thread_time()
            try:
                return await super().complete(request)
            finally:
                Measured.own += time.thread_time() - cpu

    model = Measured()
    registry = ProviderRegistry()
    registry.register("offline", lambda: model)
    with tempfile.TemporaryDirectory() as tmp:
        copy_default_workspace(Path(tmp) / "workspace")
        settings = BoardSettings(workspace=Path(tmp) / "workspace", data_dir=Path(tmp) / "data", roster=RosterSpec(),
                                 agent=AgentSettings(default_model="offline"),
                                 meetings=MeetingSettings(max_turns_per_agent=3, agent_timeout_s=60))
        async with await Board.open(settings, registry) as board:
            await board.parts.room.hold("A warm-up meeting about the office plants?")
            count = "SELECT COUNT(*) AS n FROM llm_calls WHERE purpose = 'meeting'"
            before = await board.parts.db.fetchone(count)
            cpu, own = time.process_time(), Measured.own
            for i in range(rounds):
                await board.parts.room.hold(f"Should we expand to Europe in year {2027 + i}?")
            used = time.process_time() - cpu - (Measured.own - own)
            after = await board.parts.db.fetchone(count)
            seats = int(after["n"]) - int(before["n"]) if after is not None and before is not None else 0
    return {"cpu": used, "seats": seats, "model_cpu": Measured.own - own}


def _meeting_kind(repo: Path, meetings: int) -> Figure:
    data = _child_kind(repo, "--meeting-child", meetings)
    seats = max(1, int(data["seats"]))
    return Figure(float(data["cpu"]) / seats, 0.0, seats)


# -- the board's turn, in process -----------------------------------------------------------


#: Turns of the ``turn`` kind per ``--messages`` (a turn is ~1-3 ms: 400 of them at the default 40).
TURNS_PER_MESSAGE = 10


async def _turn_child(turns: int) -> dict[str, float]:
    from board.app import Board
    from board.workspace.paths import copy_default_workspace
    from bot.app import all_migrations
    from tests.support.fakes.scripted_model import ScriptedModel
    from tests.support.knowledge import board_settings
    from tests.support.llm import envelope

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "workspace"
        copy_default_workspace(workspace)
        model = ScriptedModel()
        async with await Board.open(board_settings(workspace, Path(tmp) / "sessions", model), model.registry(),
                                    migrations=all_migrations()) as board:
            for i in range(5):  # warm: first-call paths, the soul files, the session
                await board.handle(envelope(f"warm {i}", message_id=i + 1))
            cpu, start = time.process_time(), time.perf_counter()
            for i in range(turns):
                await board.handle(envelope(f"What should we do about pricing, part {i}?", message_id=i + 100))
            used, wall = time.process_time() - cpu, time.perf_counter() - start
    return {"cpu": used, "wall": wall, "turns": turns}


def _child_kind(repo: Path, flag: str, count: int) -> dict[str, float]:
    """Run this script's ``flag`` child for ``repo`` in its own interpreter (its own ``sys.path``)."""
    out = subprocess.run([sys.executable, __file__, flag, str(repo), "--messages", str(count)],
                         capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": str(repo)},
                         cwd=repo)
    if out.returncode != 0:
        raise RuntimeError(f"the {flag} run from {repo} failed:\n{out.stderr[-2000:]}")
    data: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def _turn_kind(repo: Path, turns: int) -> Figure:
    data = _child_kind(repo, "--turn-child", turns)
    return Figure(float(data["cpu"]) / turns, float(data["wall"]) / turns, turns)


# -- the report ------------------------------------------------------------------------------


async def measure(repo: Path, kind: str, messages: int, statements: bool = False) -> Figure:
    if kind == "meeting":
        return await asyncio.to_thread(_meeting_kind, repo, max(1, messages // 20))
    if kind == "turn":
        return await asyncio.to_thread(_turn_kind, repo, messages * TURNS_PER_MESSAGE)
    return await _daemon_kind(repo, kind, messages, statements)


async def run(args: argparse.Namespace) -> None:
    sys.modules.setdefault("benchmarks_webhook", _load_webhook())
    checkouts = {"baseline": args.baseline, "this": REPO}
    results: dict[tuple[str, str], list[Figure]] = {}
    for _ in range(args.rounds):  # interleaved: a busy moment on a shared machine hits both alike
        for kind in args.kinds:
            for name, repo in checkouts.items():
                results.setdefault((kind, name), []).append(await measure(repo, kind, args.messages,
                                                                                 args.statements))
    print(f"CPU per message of the daemon (user+system), median of {args.rounds} round(s); baseline "
          f"{checkouts['baseline']}, this {checkouts['this']}")
    print(f"{'kind':<9} {'per':<16} {'baseline ms':>12} {'this ms':>9} {'this/baseline':>14}   wall/msg (under load)")
    per = {"chat": "answered message", "tool": "answered message", "webhook": "acknowledged", "turn": "board turn",
           "meeting": "seat"}
    for kind in args.kinds:
        base = statistics.median(f.cpu for f in results[(kind, "baseline")]) * 1000
        mine = statistics.median(f.cpu for f in results[(kind, "this")]) * 1000
        walls = [statistics.median(f.wall for f in results[(kind, n)]) * 1000 for n in checkouts]
        counts = [[f.statements for f in results[(kind, n)] if f.statements is not None] for n in checkouts]
        said = (f"   statements/msg {statistics.median(counts[0]):.1f} / {statistics.median(counts[1]):.1f}"
                if all(counts) else "")
        print(f"{kind:<9} {per[kind]:<16} {base:>12.2f} {mine:>9.2f} {mine / base if base else 0:>14.2f}   "
              f"{walls[0]:.1f} / {walls[1]:.1f} ms{said}")


def _load_webhook() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("benchmarks_webhook", REPO / "benchmarks" / "webhook.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmarks_webhook"] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=40, help="messages per kind and round (default 40)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, interleaved (default 3)")
    parser.add_argument("--baseline", default="/work/main", help="the checkout to compare with (default /work/main)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"which kinds (default {','.join(KINDS)})")
    parser.add_argument("--statements", action="store_true",
                        help="also count the SQL statements per message (baseline / this)")
    parser.add_argument("--quick", action="store_true", help="one round of 3 messages (for a test)")
    parser.add_argument("--meeting-child", metavar="REPO", help=argparse.SUPPRESS)
    parser.add_argument("--turn-child", metavar="REPO", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.meeting_child:
        print(json.dumps(asyncio.run(_meeting_child(max(1, args.messages)))))
        return
    if args.turn_child:
        print(json.dumps(asyncio.run(_turn_child(max(1, args.messages)))))
        return
    args.kinds = [k for k in args.kinds.split(",") if k]
    if unknown := set(args.kinds) - set(KINDS):
        parser.error(f"unknown kind(s) {', '.join(sorted(unknown))}: use {', '.join(KINDS)}")
    if args.quick:
        args.messages, args.rounds = 3, 1
    args.baseline = Path(args.baseline).resolve()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
