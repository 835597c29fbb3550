"""Board meeting wall time against its critical path and against running every call in sequence.

A 6-agent meeting (the chair and five specialists) of 3 rounds on a model with a fixed
latency per call (the offline model behind an asyncio.sleep). The critical path is computed
from the model calls the meeting actually made: the longest chain of calls that do not
overlap in time (each starts after the previous one ended), times the latency. It is set
against the meeting's phases (framing, 3 rounds, synthesis = 5): a chain longer than 5 means
some phase waits for a second call (a tool follow-up, a review after the synthesis). The
sequential baseline is the same meeting with ``parallel: false``, measured in the same run.
Goals: a chain of 5 calls, wall / 5 phases <= 1.1. Prints medians; asserts nothing on time.

Run: python benchmarks/meeting.py [--latency 0.1] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

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
    """The offline model, taking ``latency`` seconds per call and keeping when each call ran."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.spans: list[tuple[float, float]] = []

    @property
    def calls(self) -> int:
        return len(self.spans)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        start = time.perf_counter()
        await asyncio.sleep(self.latency)
        self.spans.append((start, time.perf_counter()))
        return await super().complete(request)


def longest_chain(spans: list[tuple[float, float]]) -> int:
    """The most calls that ran one after another: each starting once the previous had ended."""
    ordered = sorted(spans, key=lambda span: span[1])
    chain: list[int] = []
    for i, (start, _end) in enumerate(ordered):
        chain.append(1 + max((chain[j] for j in range(i) if ordered[j][1] <= start), default=0))
    return max(chain, default=0)


async def one_meeting(root: Path, latency: float, parallel: bool) -> tuple[float, int, int, str]:
    model = FixedLatency(latency)
    registry = ProviderRegistry()
    registry.register("offline", lambda: model)
    settings = BoardSettings(
        workspace=root / "workspace", data_dir=root / f"data-{time.monotonic_ns()}", roster=RosterSpec(),
        agent=AgentSettings(default_model="offline"),
        meetings=MeetingSettings(max_turns_per_agent=ROUNDS, parallel=parallel, agent_timeout_s=60),
    )
    async with await Board.open(settings, registry) as board:
        start = time.perf_counter()
        result = await board.parts.room.hold("Should we expand to Europe next year?")
        wall = time.perf_counter() - start
    return wall, model.calls, longest_chain(model.spans), result.stop_reason.value


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_default_workspace(root / "workspace")
        parallel = [await one_meeting(root, args.latency, True) for _ in range(args.runs)]
        sequential = [await one_meeting(root, args.latency, False) for _ in range(max(1, args.runs // 2))]
    calls = parallel[0][1]
    chain = max(c for _, _, c, _ in parallel)
    critical = chain * args.latency
    phases = PHASES * args.latency
    wall_p = statistics.median(w for w, _, _, _ in parallel)
    wall_s = statistics.median(w for w, _, _, _ in sequential)
    print(f"meeting: chair + 5 specialists, {ROUNDS} rounds, {args.latency * 1000:.0f} ms per model call, "
          f"{args.runs} runs (stop: {parallel[0][3]})")
    print(f"  model calls per meeting:             {calls}")
    print(f"  longest chain of calls in sequence:  {chain}   (goal: {PHASES}, one per phase)")
    print(f"  critical path ({chain} calls x latency):  {critical * 1000:8.1f} ms")
    print(f"  the phases ({PHASES} x latency):           {phases * 1000:8.1f} ms")
    print(f"  every call in sequence ({calls} x latency): {calls * args.latency * 1000:8.1f} ms")
    print(f"  measured, parallel rounds (median):  {wall_p * 1000:8.1f} ms   "
          f"wall / critical path = {wall_p / critical:.3f}   wall / {PHASES} phases = {wall_p / phases:.3f}"
          "   (goal <= 1.1)")
    print(f"  measured, sequential rounds (median): {wall_s * 1000:8.1f} ms   "
          f"wall / {PHASES} phases = {wall_s / phases:.3f}")
    print(f"  speed-up of parallel over sequential: {wall_s / wall_p:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
