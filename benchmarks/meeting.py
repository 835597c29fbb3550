"""Board meeting wall time against its critical path and against running every call in sequence.

A 6-agent meeting (the chair and five specialists) of 3 rounds on a model with a fixed
latency per call (the offline model behind an asyncio.sleep). The critical path is computed
from the model calls the meeting actually made: the longest chain of calls that do not
overlap in time (each starts after the previous one ended), times the latency. It is set
against the meeting's phases (framing, 3 rounds, synthesis = 5): a chain longer than 5 means
some phase waits for a second call (a tool follow-up, a review after the synthesis). The
sequential baseline is the same meeting with ``parallel: false``, measured in the same run.
Goals: a chain of 5 calls, wall / 5 phases <= 1.1. Prints medians; asserts nothing on time. The wall is
counted without the fake model's own work (the offline model writing its answers on the same CPU, measured
as that thread's CPU time): that is the model's, not Sabha's.

With a seat at the table (issue 40) the same meeting is also measured the way a user meets it: called from
a Telegram forum with the Telegram channel running against the fake Bot API (every statement posted as its
own message, the decision and the minutes too: the messages are counted at the fake), and the owner's
contribution stored during round 1 (``BoardRoom.contribute``), which every member's round-2 request must
quote (checked in the requests). Its wall / critical path is printed beside the plain meeting's (the
baseline, measured in the same run), and the ratio of the two walls. Goal: <= 1.1 for both. The fake Bot API
runs in this process: its handlers' CPU (Telegram's servers' work) is printed, and the wall is also given
without it, as the fake model's is.

The wall ends when the meeting returns: the forum meeting's background task (its end told to its displays; since
meet46 its bookkeeping, the decision written to the members' sessions and the review scheduled, runs after that and
is printed apart, as the time until the room is drained); the plain meeting's ``BoardRoom.hold``, which returns
once the bookkeeping is done too. Beside it is printed what a user waits for: the time to the decision shown
(plain: a display of its own told the DECISION event; forum: the decision's message received by the fake Bot API).
The CPU per meeting counts everything until the room is drained (the bookkeeping included) and the forum's view
has sent every post (the messages are counted then).

Beside the wall, the process's CPU per meeting is printed (user + system of this process while the meeting ran,
the fake model's own work taken out): it holds on a busy machine, where the wall does not. ``--timeline``
prints one meeting's model calls against its phases (a plain one's and a forum one's): the time before each
phase's first call (what runs between phases, on the critical path), the spread of the phase's call starts (the
members' prompts built one after another) and how late its last call ended (the event loop busy), and the tail
after the last call.

Run: python benchmarks/meeting.py [--latency 0.1] [--runs 5] [--timeline] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.llm.base import LLMRequest, LLMResponse
from board.llm.offline import OfflineProvider
from board.llm.registry import ProviderRegistry
from board.roles import RosterSpec
from board.room.meeting import MeetingSettings
from board.workspace.paths import copy_default_workspace

ROUNDS = 3
PHASES = 1 + ROUNDS + 1  # framing, the rounds, the synthesis


class FixedLatency(OfflineProvider):
    """The offline model, taking ``latency`` seconds per call and keeping when each call ran (and what it asked)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.spans: list[tuple[float, float]] = []
        self.asked: list[str] = []  # the last user message of each call
        self.own = 0.0  # CPU seconds the fake model spent writing its answers (not Sabha's work)

    @property
    def calls(self) -> int:
        return len(self.spans)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        start = time.perf_counter()
        self.asked.append(next((m.content for m in reversed(request.messages) if m.role == "user"), ""))
        await asyncio.sleep(self.latency)
        self.spans.append((start, time.perf_counter()))
        cpu = time.thread_time()
        try:
            return await super().complete(request)
        finally:
            self.own += time.thread_time() - cpu


def longest_chain(spans: list[tuple[float, float]]) -> int:
    """The most calls that ran one after another: each starting once the previous had ended."""
    ordered = sorted(spans, key=lambda span: span[1])
    chain: list[int] = []
    for i, (start, _end) in enumerate(ordered):
        chain.append(1 + max((chain[j] for j in range(i) if ordered[j][1] <= start), default=0))
    return max(chain, default=0)


TOPIC = "Should we expand to Europe next year?"
CONTRIBUTION = "@finance redo it with 20% churn"


def _settings(root: Path, parallel: bool) -> BoardSettings:
    return BoardSettings(
        workspace=root / "workspace", data_dir=root / f"data-{time.monotonic_ns()}", roster=RosterSpec(),
        agent=AgentSettings(default_model="offline"),
        meetings=MeetingSettings(max_turns_per_agent=ROUNDS, parallel=parallel, agent_timeout_s=60),
    )


def timeline(spans: list[tuple[float, float]], start: float, end: float, latency: float) -> list[str]:
    """One meeting's calls by phase (calls that start together): the gap before the phase's first call, the
    spread of its starts, how late its last call ended; then the tail after the last call (ms)."""
    phases: list[list[tuple[float, float]]] = []
    for span in sorted(spans):
        if phases and span[0] - phases[-1][0][0] < latency / 2:
            phases[-1].append(span)
        else:
            phases.append([span])
    lines, previous = [], start
    for number, calls in enumerate(phases, start=1):
        first, last = calls[0][0], max(s for s, _ in calls)
        ended = max(e for _, e in calls)
        lines.append(f"    phase {number} ({len(calls)} call{'s' if len(calls) != 1 else ''}): "
                     f"{(first - previous) * 1000:6.1f} ms before its first call, starts spread over "
                     f"{(last - first) * 1000:4.1f} ms, last call ended {(ended - last - latency) * 1000:4.1f} ms late")
        previous = ended
    lines.append(f"    after the last call:          {(end - previous) * 1000:6.1f} ms to the meeting's end")
    return lines


@dataclass
class Plain:
    """One plain meeting (no channel, nobody at the table)."""

    wall: float  # less the fake model's own work
    cpu: float  # this process's CPU while it ran, less the fake model's own work
    shown: float  # to the decision told to a display (a subscriber of its own), less the fake model's own work
    calls: int
    chain: int
    stop: str
    timeline: list[str]


async def one_meeting(root: Path, latency: float, parallel: bool) -> Plain:
    """The plain meeting: see :class:`Plain`."""
    model = FixedLatency(latency)
    registry = ProviderRegistry()
    registry.register("offline", lambda: model)
    async with await Board.open(_settings(root, parallel), registry) as board:
        shown: list[float] = []

        async def display(event: Any) -> None:  # a display: told the decision once it is stored
            if event.kind == "decision":
                shown.append(time.perf_counter() - model.own)

        board.parts.room.subscribe(display)
        start, cpu = time.perf_counter(), time.process_time()
        result = await board.parts.room.hold(TOPIC)
        end, used = time.perf_counter(), time.process_time() - cpu - model.own
    return Plain(end - start - model.own, used, (shown[0] if shown else end - model.own) - start, model.calls,
                 longest_chain(model.spans), result.stop_reason.value, timeline(model.spans, start, end, latency))


@dataclass
class AtTheTable:
    """One meeting called from the Telegram forum with the owner's contribution in round 1."""

    wall: float
    wall_sabha: float  # the wall less the fake Bot API handlers' own CPU too (Telegram's servers' work)
    shown: float  # to the decision's message at the fake Bot API, less the fake model's own work
    drained: float  # to its bookkeeping done too (BoardRoom.drain), less the fake model's own work
    cpu: float  # this process's CPU until drained and posted, less the fake model's (the fake Bot API's is in it)
    api: float  # the CPU the fake Bot API's handlers spent meanwhile
    calls: int
    chain: int
    stop: str
    messages: int  # sendMessage calls the fake received while the meeting ran
    quoted: int  # round-2 member requests that quote the contribution
    timeline: list[str]


async def one_meeting_at_the_table(root: Path, latency: float) -> AtTheTable:
    """The meeting as a user meets it: see the module docstring."""
    from board.envelope import Envelope
    from board.room.meeting import MeetingEvent
    from bot.app import all_migrations
    from tests.support.fakes.telegram_api import FakeTelegramAPI
    from tests.support.telegram import FORUM, OWNER, running, tg_settings

    class TimedTelegramAPI(FakeTelegramAPI):
        """The fake Bot API, keeping the CPU its handlers spend (Telegram's servers' work, not Sabha's)."""

        own = 0.0

        async def _handle(self, request: Any) -> Any:
            if request.match_info.get("method", "").lower() == "getupdates":  # a long poll: it waits, Sabha works
                return await super()._handle(request)
            cpu = time.thread_time()
            try:
                return await super()._handle(request)
            finally:
                TimedTelegramAPI.own += time.thread_time() - cpu

    model = FixedLatency(latency)
    registry = ProviderRegistry()
    registry.register("offline", lambda: model)
    async with TimedTelegramAPI() as fake, await Board.open(_settings(root, True), registry,
                                                                   migrations=all_migrations()) as board, \
            running(board, tg_settings(fake)) as channel:
        room = board.parts.room
        contributed: list[asyncio.Task[object]] = []

        async def in_round_one(event: MeetingEvent) -> None:
            if event.kind == "speaking" and event.round == 1 and not contributed:
                contributed.append(asyncio.create_task(room.contribute(
                    event.meeting_id, sender=str(OWNER), name="the owner", text=CONTRIBUTION, via="telegram")))

        room.subscribe(_at_once(in_round_one))
        envelope = Envelope(channel="telegram", chat_id=str(FORUM), text=f"/meeting {TOPIC}", sender=str(OWNER),
                            sender_name="Owner", is_group=True, is_owner=True)
        before = len(fake.calls_to("sendMessage"))
        start, cpu, served = time.perf_counter(), time.process_time(), TimedTelegramAPI.own
        since, known = time.monotonic(), len(fake.calls)  # the fake stamps each call on time.monotonic
        run = room.start(TOPIC, envelope=envelope)
        await _returned(room, run.id)
        wall = time.perf_counter() - start - model.own
        await room.drain()  # its bookkeeping too: in the CPU figure, not in the wall
        drained = time.perf_counter() - start - model.own
        await channel.meetings.drain(60)  # and every post out (the minutes, the final status): counted, CPU too
        api = TimedTelegramAPI.own - served
        used = time.process_time() - cpu - model.own
        await asyncio.gather(*contributed)
        row = await room.store.get(run.id)
        messages = len(fake.calls_to("sendMessage")) - before
        shown = _decision_posted(fake.calls[known:], fake.call_times[known:], row.decision if row else None)
    quoted = sum(1 for asked in model.asked if "Round 2 of" in asked and "redo it with 20% churn" in asked)
    to_decision = (shown - since - model.own) if shown is not None else wall
    return AtTheTable(wall, wall - api, to_decision, drained, used, api, model.calls, longest_chain(model.spans),
                      row.stop_reason if row else "?", messages, quoted,
                      timeline(model.spans, start, start + wall + model.own, latency))


def _at_once(subscriber: Any) -> Any:
    """The benchmark's own subscriber (it stands for the owner writing in) reads only the events: told them at once,
    like the Telegram view, not after the items' dating (meet47's ``ToldAtOnce``; as it is on a tree without it)."""
    try:
        from board.room.subscribers import ToldAtOnce
    except ImportError:
        return subscriber
    return ToldAtOnce(subscriber)


async def _returned(room: Any, meeting_id: str) -> None:
    """Until the background meeting's task returned (its end told to its displays). Its bookkeeping runs after that
    where the room has ``ended`` (meet46); before, the task returned after it."""
    ended = getattr(room, "ended", None)
    if ended is not None:
        await ended(meeting_id)
    else:
        await asyncio.wait([room._tasks[meeting_id]])  # a tree without BoardRoom.ended


def _decision_posted(calls: list[tuple[str, dict[str, Any]]], times: list[float],
                     decision: dict[str, Any] | None) -> float | None:
    """When the fake Bot API received the message that shows the decision (its recommendation's start)."""
    probe = str((decision or {}).get("recommendation") or "")[:24]
    for (method, params), at in zip(calls, times, strict=False):
        if probe and method.lower() == "sendmessage" and probe in str(params.get("text", "")):
            return at
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeline", action="store_true",
                        help="print the last plain and forum meetings' calls by phase")
    parser.add_argument("--quick", action="store_true", help="the smallest run (1 of each): for a test")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_default_workspace(root / "workspace")
        await one_meeting(root, args.latency, True)  # warm-up, not counted: the first meeting loads its modules
        parallel = [await one_meeting(root, args.latency, True) for _ in range(args.runs)]
        sequential = [await one_meeting(root, args.latency, False) for _ in range(max(1, args.runs // 2))]
        table = [await one_meeting_at_the_table(root, args.latency) for _ in range(args.runs)]
    _plain(args, parallel, sequential)
    if args.timeline:
        print("  one meeting's calls by phase (the last run):")
        print("\n".join(parallel[-1].timeline))
    _table(args, table, statistics.median(p.wall for p in parallel))


def _plain(args: argparse.Namespace, parallel: list[Plain], sequential: list[Plain]) -> None:
    calls = parallel[0].calls
    chain = max(p.chain for p in parallel)
    critical = chain * args.latency
    phases = PHASES * args.latency
    wall_p = statistics.median(p.wall for p in parallel)
    wall_s = statistics.median(p.wall for p in sequential)
    print(f"meeting: chair + 5 specialists, {ROUNDS} rounds, {args.latency * 1000:.0f} ms per model call, "
          f"{args.runs} runs (stop: {parallel[0].stop})")
    print(f"  model calls per meeting:             {calls}")
    print(f"  longest chain of calls in sequence:  {chain}   (goal: {PHASES}, one per phase)")
    print(f"  critical path ({chain} calls x latency):  {critical * 1000:8.1f} ms")
    print(f"  the phases ({PHASES} x latency):           {phases * 1000:8.1f} ms")
    print(f"  every call in sequence ({calls} x latency): {calls * args.latency * 1000:8.1f} ms")
    print(f"  measured, parallel rounds (median, the fake model's own work taken out):\n"
          f"                                       {wall_p * 1000:8.1f} ms   "
          f"wall / critical path = {wall_p / critical:.3f}   wall / {PHASES} phases = {wall_p / phases:.3f}"
          "   (goal <= 1.1)")
    shown_p = statistics.median(p.shown for p in parallel)
    print(f"  to the decision shown (a display told it; median): {shown_p * 1000:8.1f} ms   "
          f"/ critical path = {shown_p / critical:.3f}   (what a user waits for)")
    print(f"  CPU of the process per meeting (median, user + system, the fake model's taken out): "
          f"{statistics.median(p.cpu for p in parallel) * 1000:.1f} ms")
    print(f"  measured, sequential rounds (median): {wall_s * 1000:8.1f} ms   "
          f"wall / {PHASES} phases = {wall_s / phases:.3f}")
    print(f"  speed-up of parallel over sequential: {wall_s / wall_p:.2f}x")


def _table(args: argparse.Namespace, table: list[AtTheTable], wall_p: float) -> None:
    wall_t = statistics.median(t.wall for t in table)
    chain_t = max(t.chain for t in table)
    critical_t = chain_t * args.latency
    print("at the table: called from a Telegram forum (fake Bot API), statements posted one message each, the "
          "owner's contribution in round 1")
    print(f"  model calls per meeting:             {table[0].calls}   (stop: {table[0].stop})")
    print(f"  messages posted per meeting:         {statistics.median(t.messages for t in table):.0f}")
    print(f"  round-2 requests quoting the owner:  {min(t.quoted for t in table)} of 5 (every run)")
    print(f"  longest chain of calls in sequence:  {chain_t}")
    print(f"  measured (median):                   {wall_t * 1000:8.1f} ms   wall / critical path = "
          f"{wall_t / critical_t:.3f}   (goal <= 1.1)")
    shown_t = statistics.median(t.shown for t in table)
    print(f"  to the decision's message at the fake Bot API (median): {shown_t * 1000:8.1f} ms   "
          f"/ critical path = {shown_t / critical_t:.3f}   (what a user waits for)")
    drained_t = statistics.median(t.drained for t in table)
    print(f"  to its bookkeeping done too (the room drained; median): {drained_t * 1000:8.1f} ms   "
          f"/ critical path = {drained_t / critical_t:.3f}   (nobody waits for it)")
    sabha_t = statistics.median(t.wall_sabha for t in table)
    print(f"  the fake Bot API's handlers' CPU taken out too (Telegram's work): {sabha_t * 1000:8.1f} ms   "
          f"wall / critical path = {sabha_t / critical_t:.3f}")
    api, cpu = (statistics.median(t.api for t in table) * 1000, statistics.median(t.cpu for t in table) * 1000)
    print(f"  CPU of the process per meeting (median; of it the fake Bot API's handlers {api:.1f} ms): {cpu:.1f} ms")
    print(f"  against the plain meeting (baseline, this run): {wall_t / wall_p:.3f}x   "
          f"({wall_t * 1000:.1f} ms vs {wall_p * 1000:.1f} ms)")
    if args.timeline:
        print("  one meeting's calls by phase (the last run):")
        print("\n".join(table[-1].timeline))


if __name__ == "__main__":
    asyncio.run(main())
