"""Outside tools (MCP): what Sabha adds to a read-only call, and what attached servers add to a turn.

Prints medians and the goals' verdicts; asserts nothing. Run: python benchmarks/tools.py [--calls 200]
[--turns 100]. Needs ``mcp-server-time`` (the test extra) next to this Python.

1. A read-only call (``mcp-server-time``'s ``get_current_time``), in the same run: made straight with the SDK
   (``mcp.Client.call_tool``) and through Sabha (the tool the model would call: the call counted, timed against
   the turn's deadline and the server's timeout, its result quoted and cut). Goal: through Sabha <= 1.2x the
   straight call + 5 ms.
2. The turn's overhead with 5 servers attached to the role (5 ``mcp-server-time`` processes, given as
   ``mcp:t1`` ... ``mcp:t5``: 10 more tools offered) over none: a board on a model that answers at once, TURNS turns
   each way, the model never calling a tool (what attaching costs every answer: listing the tools, their specs
   in the request).
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
from board.agent.tools import ToolContext
from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.tools.mcp import McpServers, McpSettings, ServerSpec
from board.workspace.paths import copy_default_workspace
from tests.support.fakes.scripted_model import ScriptedModel, say

TIME = str(Path(sys.executable).parent / "mcp-server-time")
ARGS = {"timezone": "Asia/Kolkata"}


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def straight(calls: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    async with Client(StdioServerParameters(command=TIME), cache=None) as client:
        await client.list_tools()
        times = []
        for _ in range(calls):
            began = time.perf_counter()
            await client.call_tool("get_current_time", ARGS)
            times.append(time.perf_counter() - began)
        return times


async def through_sabha(calls: int) -> list[float]:
    ctx = ToolContext(role="research", session_key="bench")
    manager = McpServers(McpSettings(servers=(ServerSpec("time", command=TIME),), max_calls_per_turn=calls + 1),
                         grants=lambda role: ("mcp:time",))
    try:
        await manager.ensure(ctx)
        tool = next(t for t in manager.tools_for(ctx) if t.spec.name == "time__get_current_time")
        times = []
        for _ in range(calls):
            began = time.perf_counter()
            result = await tool.handler(dict(ARGS), ctx)
            times.append(time.perf_counter() - began)
            assert result.ok, result
        return times
    finally:
        await manager.close()


async def turns(root: Path, servers: int, count: int) -> list[float]:
    workspace = root / f"ws{servers}"
    copy_default_workspace(workspace)
    soul = workspace / "board" / "research.soul.md"
    if servers:  # mcp: entries only: the role keeps its own tools, as with none
        given = ", ".join(f'"mcp:t{i}"' for i in range(1, servers + 1))
        soul.write_text(soul.read_text().replace("consults: [finance, strategy]",
                                                 f"consults: [finance, strategy]\ntools: [{given}]"))
    model = ScriptedModel(default=say("Noted."))
    specs = tuple(ServerSpec(f"t{i}", command=TIME) for i in range(1, servers + 1))
    settings = BoardSettings(workspace=workspace, data_dir=root / f"data{servers}",
                             agent=AgentSettings(default_model="scripted:main"), mcp=McpSettings(servers=specs))
    board = await Board.open(settings, model.registry())
    try:
        board.parts.mcp.start()
        await board.parts.mcp.settled()
        envelope = Envelope(channel="cli", text="a short question", sender="owner", is_owner=True)
        times = []
        for n in range(count + 5):
            began = time.perf_counter()
            await board.parts.runner.turn("research", f"cli:bench{servers}:{n}", envelope, envelope.text)
            if n >= 5:  # the first turns warm caches
                times.append(time.perf_counter() - began)
        offered = len(model.requests[-1].request.tools)
        print(f"  {servers} server(s): {offered} tools offered, turn median {ms(times):.2f} ms")
        return times
    finally:
        await board.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    print(f"1. a read-only call, {args.calls} times each way (mcp-server-time get_current_time, stdio)")
    direct = await straight(args.calls)
    ours = await through_sabha(args.calls)
    goal = ms(direct) * 1.2 + 5
    print(f"  straight with the SDK: median {ms(direct):.2f} ms")
    print(f"  through Sabha:         median {ms(ours):.2f} ms ({ms(ours) / ms(direct):.2f}x)")
    print(f"  goal <= 1.2x + 5 ms = {goal:.2f} ms: {'met' if ms(ours) <= goal else 'NOT met'}")
    print(f"2. a turn's overhead with 5 servers attached over none ({args.turns} turns each)")
    with tempfile.TemporaryDirectory() as tmp:
        none = await turns(Path(tmp), 0, args.turns)
        five = await turns(Path(tmp), 5, args.turns)
    print(f"  overhead: {ms(five) - ms(none):+.2f} ms per turn ({ms(five) / ms(none):.2f}x)")


if __name__ == "__main__":
    if not Path(TIME).exists():
        raise SystemExit(f"{TIME} is missing: pip install -e '.[test]'")
    asyncio.run(main())
