"""Prompt tokens per turn over a 40-turn conversation, with and without compaction.

Prints figures; asserts nothing. Run: python benchmarks/prompt_tokens.py

A board on a copy of the default workspace talks to a local stand-in model that
answers every turn with a realistic ~110-word reply (and every compaction request with
a ~120-word summary). The Director asks 40 varied questions of the chair. Prompt sizes
come from the ledger's per-block attribution (static, soul, summary, dynamic, history,
message), i.e. what Sabha itself counts; with no tiktoken encoding cached locally
these are character estimates (about four characters per token), and the output says
which method was used.

Three setups:
  unbounded    every earlier message is sent (board.history_messages 1000, compaction off)
  window       the last 20 messages are sent, older ones are dropped (compaction off)
  compaction   the default: history over 3000 tokens (or 20 messages) is summarised

For each: median and last-turn prompt tokens, the total over 40 turns (compaction calls
included), and the share of the input that is the byte-stable static block (base
directives, AGENTS.md, soul, roster) a provider can cache (Anthropic cache_control /
OpenAI automatic prefix caching), plus the whole cacheable prefix: tool schemas (which
precede the system prompt in the cache order), the static block and the compaction
summary block (stable between compactions).
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.agent.compaction import ContextSettings
from board.agent.runner import AgentSettings
from board.envelope import Envelope
from board.llm.base import LLMRequest, LLMResponse, Usage
from board.llm.registry import ProviderRegistry
from board.roles import RosterSpec
from board.service import Board, BoardSettings
from board.workspace.paths import copy_default_workspace

TURNS = 40
PROMPT_BLOCKS = ("static", "soul", "summary", "dynamic", "history", "message", "tools")

TOPICS = [
    "our Pune warehouse lease renewal", "hiring two senior engineers this quarter", "the GST filing calendar",
    "raising prices for the premium plan", "a distributor deal in Gujarat", "moving hosting to a cheaper cloud",
    "the churn spike among small retailers", "a WhatsApp ordering channel", "cash runway after the bridge round",
    "a loyalty programme for repeat buyers",
]
ASKS = [
    "What should I decide about {t}, and by when?", "Give me the risks of {t} in three bullets.",
    "What numbers do we need before committing to {t}?", "Who on the board would disagree about {t}, and why?",
    "Summarise where we landed on {t} so far.",
]
WORDS = [
    "margin", "runway", "payback", "customers", "retention", "pricing", "cost", "risk", "plan", "quarter",
    "cash", "hire", "vendor", "contract", "demand", "supply", "forecast", "downside", "upside", "assumption",
    "evidence", "timeline", "budget", "team", "market",
]


class StandInModel:
    """Deterministic replies of realistic length; it never looks at the prompt's size."""

    name = "bench"

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.static_blocks: set[str] = set()

    def _prose(self, words: int) -> str:
        chunks = []
        for _ in range(words // 12):
            sentence = " ".join(self.random.choice(WORDS) for _ in range(12))
            chunks.append(sentence.capitalize() + ".")
        return " ".join(chunks)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        compaction = request.metadata.get("purpose") == "compaction"
        if not compaction:
            self.static_blocks.add(next(b.text for b in request.system if b.name == "static"))
        text = self._prose(120 if compaction else 110)
        return LLMResponse(text=text, model=request.model, usage=Usage(input_tokens=1, output_tokens=len(text) // 4))


def questions(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(ASKS).format(t=TOPICS[i % len(TOPICS)]) + " " + " ".join(rng.choice(WORDS) for _ in range(14))
            for i in range(TURNS)]


async def run(name: str, root: Path, agent: AgentSettings) -> dict[str, object]:
    ws = root / name / "workspace"
    copy_default_workspace(ws)
    providers = ProviderRegistry()
    model = StandInModel(seed=7)
    providers.register("bench", lambda: model)
    settings = BoardSettings(workspace=ws, data_dir=root / name / "sessions", roster=RosterSpec(), agent=agent)
    async with await Board.open(settings, providers) as board:
        for text in questions(seed=11):
            await board.handle(Envelope(channel="console", text=text, sender="director", sender_name="Director"))
        rows = await board.db.fetchall("SELECT purpose, blocks FROM llm_calls ORDER BY id")
    per_turn, prefix, cacheable, compaction_tokens, method = [], [], [], 0, ""
    for row in rows:
        blocks = json.loads(row["blocks"])
        method = blocks.get("method", method)
        total = sum(int(blocks.get(k, 0)) for k in PROMPT_BLOCKS)
        if row["purpose"] == "compaction":
            compaction_tokens += total
            continue
        per_turn.append(total)
        prefix.append(int(blocks.get("static", 0)) + int(blocks.get("soul", 0)))
        cacheable.append(int(blocks.get("cacheable_prefix", 0)))
    return {
        "name": name,
        "per_turn": per_turn,
        "prefix": prefix,
        "cacheable": cacheable,
        "compactions": sum(1 for r in rows if r["purpose"] == "compaction"),
        "compaction_tokens": compaction_tokens,
        "method": method,
        "distinct_static": len(model.static_blocks),
    }


def share(part: list[int], whole: list[int]) -> float:
    return sum(part) / sum(whole) if sum(whole) else 0.0


async def main() -> None:
    base = AgentSettings(default_model="bench:stand-in")
    setups = [
        ("unbounded", replace(base, history_messages=1000,
                              context=ContextSettings(history_tokens=1_000_000, compaction=False))),
        ("window", replace(base, history_messages=20,
                           context=ContextSettings(history_tokens=1_000_000, compaction=False))),
        ("compaction", replace(base, history_messages=20, context=ContextSettings())),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        results = [await run(name, Path(tmp), agent) for name, agent in setups]

    method = results[0]["method"]
    print(f"Prompt tokens per turn, {TURNS}-turn conversation with the chair (counted as {method})")
    print()
    header = f"{'setup':<11} {'median':>7} {'turn 40':>8} {'max':>6} {'total 40 turns':>15} {'compactions':>12} " \
             f"{'static prefix':>14} {'cacheable':>10}"
    print(header)
    print("-" * len(header))
    for r in results:
        per_turn = r["per_turn"]
        assert isinstance(per_turn, list)
        total = sum(per_turn) + int(r["compaction_tokens"])  # type: ignore[arg-type]
        print(
            f"{r['name']:<11} {statistics.median(per_turn):>7.0f} {per_turn[-1]:>8} {max(per_turn):>6} "
            f"{total:>15} {r['compactions']:>4} ({r['compaction_tokens']:>5} tok) "
            f"{share(r['prefix'], per_turn):>13.0%} {share(r['cacheable'], per_turn):>10.0%}"  # type: ignore[arg-type]
        )
    print()
    print("Prompt tokens at turns 1, 5, 10, 20, 30, 40:")
    for r in results:
        per_turn = r["per_turn"]
        assert isinstance(per_turn, list)
        marks = [per_turn[i - 1] for i in (1, 5, 10, 20, 30, 40)]
        print(f"  {r['name']:<11} " + "  ".join(f"{m:>6}" for m in marks))
    static_tokens = results[0]["prefix"][0]  # type: ignore[index]
    print()
    distinct = {r["name"]: r["distinct_static"] for r in results}
    print(f"The static prefix (base directives, AGENTS.md, soul, roster) is {static_tokens} tokens on every turn; "
          f"distinct static blocks sent over {TURNS} turns: {distinct} (1 = byte-identical every turn).")
    unbounded, compacted = results[0], results[2]
    saved = 1 - sum(compacted["per_turn"]) / sum(unbounded["per_turn"])  # type: ignore[arg-type]
    print(f"Compaction vs unbounded history: {saved:.0%} fewer prompt tokens over {TURNS} turns "
          f"(summariser calls included: "
          f"{1 - (sum(compacted['per_turn']) + compacted['compaction_tokens']) / sum(unbounded['per_turn']):.0%}).")  # type: ignore[arg-type,operator]


if __name__ == "__main__":
    asyncio.run(main())
