"""Board meeting wall time against its critical path and against running every call in sequence.

A 6-agent meeting (the chair and five specialists) of 3 rounds on a model with a fixed
latency per call (the offline model behind an asyncio.sleep). The critical path is the
number of sequential model phases (framing, 3 rounds, synthesis = 5) times the latency;
the sequential baseline is the same meeting with ``parallel: false``, measured in the
same run. Goal: wall / critical path <= 1.15. Prints medians; asserts nothing on time.

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
from board.llm.base import LLMRequest, LLMResponse
from board.llm.offline import OfflineProvider
from board.llm.registry import ProviderRegistry
from board.roles import RosterSpec
from board.room.meeting import MeetingSettings
from board.service import Board, BoardSettings
from board.workspace.paths import copy_default_workspace

ROUNDS = 3


class FixedLatency(OfflineProvider):
    """The offline model, taking ``latency`` seconds per call and counting calls."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        await asyncio.sleep(self.latency)
        return await super().complete(request)


async def one_meeting(root: Path, latency: float, parallel: bool) -> tuple[float, int, str]:
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
        result = await board.room.hold("Should we expand to Europe next year?")
        wall = time.perf_counter() - start
    return wall, model.calls, result.stop_reason.value


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
    phases = 1 + ROUNDS + 1
    critical = phases * args.latency
    calls = parallel[0][1]
    wall_p = statistics.median(w for w, _, _ in parallel)
    wall_s = statistics.median(w for w, _, _ in sequential)
    print(f"meeting: chair + 5 specialists, {ROUNDS} rounds, {args.latency * 1000:.0f} ms per model call, "
          f"{args.runs} runs (stop: {parallel[0][2]})")
    print(f"  model calls per meeting:            {calls}")
    print(f"  critical path ({phases} phases x latency):  {critical * 1000:8.1f} ms")
    print(f"  every call in sequence ({calls} x latency): {calls * args.latency * 1000:8.1f} ms")
    print(f"  measured, parallel rounds (median):  {wall_p * 1000:8.1f} ms   "
          f"wall / critical path = {wall_p / critical:.3f}   (goal <= 1.15)")
    print(f"  measured, sequential rounds (median): {wall_s * 1000:8.1f} ms   "
          f"wall / critical path = {wall_s / critical:.3f}")
    print(f"  speed-up of parallel over sequential: {wall_s / wall_p:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
