"""Prompt tokens per turn over a 40-turn conversation, with and without compaction, and how much of
them a provider's prompt cache serves.

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
directives, AGENTS.md, USER.md, soul, roster), plus the whole cacheable prefix: everything
before the last cache breakpoint (tool schemas, the static block, the compaction summary,
the history and the new message; only the per-turn block follows it).

Then the same 40-turn chat (compaction on) against the fake Anthropic server
(tests/support/fakes/anthropic_api.py), which accounts cache reads the way the API documents it:
a request reads the longest prefix ending at one of its breakpoints (or up to 20 blocks
before one) that an earlier request wrote less than 5 minutes ago (a read refreshes it),
and prefixes under the model's minimum (1,024 tokens for claude-sonnet-4-6) are not
cached. The Director writes every 45 seconds (the fake's clock). Printed: the share of
input tokens read from the cache, and the USD cost of the 40 turns (summariser calls
included) at the built-in prices with caching and without it (every input token at the
input price). The baseline, measured in the same run, is the layout before rolling
breakpoints: one breakpoint on the static block and the per-turn block in the system
prompt, before the history.

The model calls of that chat are printed by purpose (a turn, the summariser's compaction, the user memory's
extraction when a message states something about its writer: the Director's questions state nothing).

Last, the same chat against the fake OpenAI server: the share of prompt tokens in a prefix
identical to the previous turn's request (measured on the request bodies), and the
``cached_tokens`` the fake reports (OpenAI's automatic caching: prompts of 1,024+ tokens,
128-token steps), which Sabha records as cache reads.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import json
import random
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.agent.compaction import ContextSettings
from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.llm.anthropic import AnthropicProvider
from board.llm.base import LLMProvider, LLMRequest, LLMResponse, PromptBlock, Usage
from board.llm.errors import ProviderSettings
from board.llm.openai import OpenAIProvider
from board.llm.pricing import PriceTable
from board.llm.registry import ProviderRegistry
from board.roles import RosterSpec
from board.workspace.paths import copy_default_workspace
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.local_server import TextReply
from tests.support.fakes.openai_api import FakeOpenAI

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
        purpose = request.metadata.get("purpose", "turn")
        compaction = purpose == "compaction"
        if purpose == "turn":  # an extraction (user memory) has a system prompt of its own, no static block
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
        rows = await board.parts.db.fetchall("SELECT purpose, blocks FROM llm_calls ORDER BY id")
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


# -- against the fake provider servers -------------------------------------------------------

ANTHROPIC_MODEL = "anthropic:claude-sonnet-4-6"
ANTHROPIC_MIN_CACHE = 1024  # the API's minimum cacheable prefix for Sonnet 4.6 (Opus 4.5+/Haiku 4.5: 4,096)
OPENAI_MODEL = "openai:gpt-4o"
SECONDS_BETWEEN_TURNS = 45.0


class BenchAnthropic(FakeAnthropic):
    """The fake Anthropic API answering every request with ~110 words of prose."""

    def __init__(self, prose: Callable[[], str], **kw: Any) -> None:
        super().__init__(**kw)
        self.prose = prose

    def default_reply(self, text: str) -> TextReply:
        return self.text_reply(self.prose())


class BenchOpenAI(FakeOpenAI):
    """The fake OpenAI API answering every request with ~110 words of prose."""

    def __init__(self, prose: Callable[[], str], **kw: Any) -> None:
        super().__init__(**kw)
        self.prose = prose

    def default_reply(self, text: str) -> TextReply:
        return self.text_reply(self.prose())


class StaticOnlyLayout:
    """The baseline: the layout before rolling breakpoints. One cache breakpoint, on the static block; the
    per-turn block in the system prompt after it (so before the history); no breakpoint in the messages."""

    def __init__(self, inner: LLMProvider) -> None:
        self.inner = inner
        self.name = inner.name

    async def complete(self, request: LLMRequest) -> LLMResponse:
        context = request.context_text
        system = request.system + ((PromptBlock("dynamic", context),) if context else ())
        messages = tuple(replace(m, cache_point=False, context="") for m in request.messages)
        return await self.inner.complete(replace(request, system=system, messages=messages))

    async def close(self) -> None:
        await self.inner.close()  # type: ignore[attr-defined]


@dataclass(frozen=True)
class CacheRun:
    """What one 40-turn chat against a fake server cost."""

    layout: str
    calls: int
    by_purpose: dict[str, int]
    compactions: int
    prompt_tokens: int
    cache_read: int
    cache_write: int
    usd: float
    usd_uncached: float
    bodies: list[dict[str, Any]]


async def run_against(name: str, root: Path, fake: FakeAnthropic | FakeOpenAI, provider: LLMProvider, model: str,
                      *, baseline: bool) -> CacheRun:
    ws = root / name / "workspace"
    copy_default_workspace(ws)
    providers = ProviderRegistry()
    wrapped: LLMProvider = StaticOnlyLayout(provider) if baseline else provider
    providers.register(provider.name, lambda: wrapped)
    agent = AgentSettings(default_model=model, history_messages=20, context=ContextSettings())
    settings = BoardSettings(workspace=ws, data_dir=root / name / "sessions", roster=RosterSpec(), agent=agent)
    first = len(fake.requests)
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    async with await Board.open(settings, providers) as board:
        for turn, text in enumerate(questions(seed=11)):
            # the Director writes every SECONDS_BETWEEN_TURNS: the per-turn block's clock and the cache's TTLs see it
            board.parts.runner.clock = functools.partial(lambda n: start + timedelta(seconds=n * SECONDS_BETWEEN_TURNS),
                                                   turn)
            await board.handle(Envelope(channel="console", text=text, sender="director", sender_name="Director"))
            if isinstance(fake, FakeAnthropic):
                fake.advance_clock(SECONDS_BETWEEN_TURNS)
        rows = await board.parts.db.fetchall(
            "SELECT model, purpose, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd "
            "FROM llm_calls WHERE outcome = 'ok' ORDER BY id")
    prices = PriceTable()
    usd = usd_uncached = 0.0
    for r in rows:
        usage = Usage(r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], r["cache_write_tokens"])
        price = prices.price_of(r["model"])
        assert price is not None
        usd += price.cost(usage)
        usd_uncached += price.uncached_cost(usage)
    return CacheRun(
        layout="static breakpoint only (before)" if baseline else "rolling breakpoints",
        calls=len(rows),
        by_purpose=dict(collections.Counter(str(r["purpose"]) for r in rows)),
        compactions=sum(1 for r in rows if r["purpose"] == "compaction"),
        prompt_tokens=sum(r["input_tokens"] + r["cache_read_tokens"] + r["cache_write_tokens"] for r in rows),
        cache_read=sum(r["cache_read_tokens"] for r in rows),
        cache_write=sum(r["cache_write_tokens"] for r in rows),
        usd=usd,
        usd_uncached=usd_uncached,
        bodies=[r.body for r in fake.requests[first:]],
    )


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on prefix equality: a few slices instead of a character loop
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def previous_turn_prefix_share(bodies: list[dict[str, Any]]) -> tuple[float, float]:
    """(share over all turns, median per turn) of each turn's prompt that is identical to the start of the
    previous turn's prompt (the wire form the fake caches on: tools, then messages); summariser calls skipped."""
    turns = [b for b in bodies if not any(str(m.get("content", "")).startswith("You keep the running memory")
                                          for m in (b.get("messages") or [])[:1] + (b.get("messages") or [])[-1:])]
    shared = whole = 0
    shares = []
    for prev, cur in itertools.pairwise(turns):
        a = json.dumps([prev.get("tools"), prev.get("messages")], sort_keys=True, ensure_ascii=False)
        b = json.dumps([cur.get("tools"), cur.get("messages")], sort_keys=True, ensure_ascii=False)
        common = _common_prefix(a, b)
        shared += common
        whole += len(b)
        shares.append(common / len(b))
    return (shared / whole if whole else 0.0), (statistics.median(shares) if shares else 0.0)


async def cache_runs(root: Path) -> tuple[list[CacheRun], list[CacheRun]]:
    anthropic_runs, openai_runs = [], []
    for baseline in (True, False):
        async with BenchAnthropic(functools.partial(StandInModel(seed=7)._prose, 110),
                                  cache_min_tokens=ANTHROPIC_MIN_CACHE) as fake:
            provider = AnthropicProvider(ProviderSettings(api_key="bench", base_url=fake.url))
            anthropic_runs.append(await run_against(f"anthropic-{baseline}", root, fake, provider, ANTHROPIC_MODEL,
                                                    baseline=baseline))
        async with BenchOpenAI(functools.partial(StandInModel(seed=7)._prose, 110)) as ofake:
            oprovider = OpenAIProvider(ProviderSettings(api_key="bench", base_url=ofake.base_url))
            openai_runs.append(await run_against(f"openai-{baseline}", root, ofake, oprovider, OPENAI_MODEL,
                                                 baseline=baseline))
    return anthropic_runs, openai_runs


def print_cache_runs(anthropic_runs: list[CacheRun], openai_runs: list[CacheRun]) -> None:
    print()
    print(f"Prompt cache, the {TURNS}-turn chat (compaction on) against the fake Anthropic API ({ANTHROPIC_MODEL}, "
          f"min. cacheable prefix {ANTHROPIC_MIN_CACHE} tokens, a message every {SECONDS_BETWEEN_TURNS:.0f} s):")
    header = (f"{'layout':<32} {'calls':>5} {'input tok':>10} {'read':>8} {'written':>8} {'fresh':>7} "
              f"{'read share':>10} {'USD cached':>10} {'USD no cache':>12} {'ratio':>6}")
    print(header)
    print("-" * len(header))
    for r in anthropic_runs:
        fresh = r.prompt_tokens - r.cache_read - r.cache_write
        print(f"{r.layout:<32} {r.calls:>5} {r.prompt_tokens:>10} {r.cache_read:>8} {r.cache_write:>8} {fresh:>7} "
              f"{r.cache_read / r.prompt_tokens:>10.1%} {r.usd:>10.4f} {r.usd_uncached:>12.4f} "
              f"{r.usd / r.usd_uncached:>6.2f}")
    before, after = anthropic_runs
    print(f"calls by purpose: {after.by_purpose}")
    print(f"(calls include {after.compactions} summariser calls; rolling vs static-only breakpoint: "
          f"{after.usd / before.usd:.2f}x the cost, read share {after.cache_read / after.prompt_tokens:.1%} vs "
          f"{before.cache_read / before.prompt_tokens:.1%})")
    print()
    print(f"The same chat against the fake OpenAI API ({OPENAI_MODEL}, automatic prefix caching):")
    header = (f"{'layout':<32} {'prefix = previous turn (all / median)':>38} {'cached_tokens share':>20} "
              f"{'USD cached':>10} {'USD no cache':>12}")
    print(header)
    print("-" * len(header))
    for r in openai_runs:
        overall, median = previous_turn_prefix_share(r.bodies)
        print(f"{r.layout:<32} {overall:>28.1%} / {median:>6.1%} {r.cache_read / r.prompt_tokens:>20.1%} "
              f"{r.usd:>10.4f} {r.usd_uncached:>12.4f}")


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
        anthropic_runs, openai_runs = await cache_runs(Path(tmp))

    method = results[0]["method"]
    print(f"Prompt tokens per turn, {TURNS}-turn conversation with the chair (counted as {method})")
    print()
    header = f"{'setup':<11} {'median':>7} {'turn 40':>8} {'max':>6} {'total 40 turns':>15} {'compactions':>12} " \
             f"{'static prefix':>14} {'before last breakpoint':>23}"
    print(header)
    print("-" * len(header))
    for r in results:
        per_turn = r["per_turn"]
        assert isinstance(per_turn, list)
        total = sum(per_turn) + int(r["compaction_tokens"])  # type: ignore[arg-type]
        print(
            f"{r['name']:<11} {statistics.median(per_turn):>7.0f} {per_turn[-1]:>8} {max(per_turn):>6} "
            f"{total:>15} {r['compactions']:>4} ({r['compaction_tokens']:>5} tok) "
            f"{share(r['prefix'], per_turn):>13.0%} {share(r['cacheable'], per_turn):>23.0%}"  # type: ignore[arg-type]
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
    print(f"The static prefix (base directives, AGENTS.md, USER.md, soul, roster) is {static_tokens} tokens on every "
          f"turn; distinct static blocks sent over {TURNS} turns: {distinct} (1 = byte-identical every turn).")
    unbounded, compacted = results[0], results[2]
    saved = 1 - sum(compacted["per_turn"]) / sum(unbounded["per_turn"])  # type: ignore[arg-type]
    print(f"Compaction vs unbounded history: {saved:.0%} fewer prompt tokens over {TURNS} turns "
          f"(summariser calls included: "
          f"{1 - (sum(compacted['per_turn']) + compacted['compaction_tokens']) / sum(unbounded['per_turn']):.0%}).")  # type: ignore[arg-type,operator]
    print_cache_runs(anthropic_runs, openai_runs)


if __name__ == "__main__":
    asyncio.run(main())
