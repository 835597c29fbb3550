"""The cost ledger: rows per LLM and tool call, prices, reports, `sabha cost` and /cost."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.app import BOARD_MIGRATIONS
from board.db import StateDB
from board.llm.base import Usage
from board.llm.pricing import ModelPrice, PriceTable
from board.spending.ledger import Ledger, LLMCallRecord, parse_since
from board.storage import Database
from board.storage.url import StateURL
from bot.app import all_migrations
from bot.cli.main import main
from tests.support.fakes.scripted_model import ScriptedModel, call, say
from tests.support.llm import LookupTool, envelope, scripted_board, session_entries

PRICES = PriceTable.with_overrides({"scripted:main": ModelPrice(input=2.0, output=10.0, cache_read=0.2,
                                                                cache_write=2.5)})


@pytest.mark.backends
async def test_each_llm_and_tool_call_is_a_row(workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    model = ScriptedModel()
    model.script(call("lookup", {"q": "tea"}), say("18%."), role="finance")
    board = await scripted_board(workspace, data_dir, model, prices=PRICES, state=state_url)
    board.parts.tools.register(LookupTool().tool())
    try:
        await board.handle(envelope("@finance tea?"))
        rows = await board.parts.db.fetchall("SELECT * FROM llm_calls ORDER BY id")
        assert len(rows) == 2
        for row in rows:
            assert (row["provider"], row["model"], row["role"], row["session_key"], row["purpose"], row["outcome"]) == (
                "scripted", "scripted:main", "finance", "board:finance", "turn", "ok")
            assert row["input_tokens"] > 0 and row["output_tokens"] > 0 and row["latency_ms"] is not None
            expected = (row["input_tokens"] * 2.0 + row["output_tokens"] * 10.0) / 1e6
            assert row["cost_usd"] == pytest.approx(expected)
        blocks = [json.loads(r["blocks"]) for r in rows]
        for key in ("static", "soul", "dynamic", "history", "message", "tools", "cacheable_prefix"):
            assert blocks[0][key] >= 0 and key in blocks[1]
        assert blocks[0]["soul"] > 0 and blocks[0]["message"] > 0 and blocks[0]["method"] == "estimate:chars/4"
        assert "tool_loop" not in blocks[0] and blocks[1]["tool_loop"] > 0  # the second call carries the tool result

        [tool] = await board.parts.db.fetchall("SELECT * FROM tool_calls")
        assert (tool["name"], tool["ok"], tool["role"], tool["session_key"]) == \
            ("lookup", 1, "finance", "board:finance")
        assert json.loads(tool["args"]) == {"q": "tea"} and tool["result_bytes"] > 0

        answer = (await session_entries(board, "board:finance"))[-1]
        assert answer["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
    finally:
        await board.close()


def test_prices_match_by_prefix_and_unknown_models_are_unpriced() -> None:
    table = PriceTable()
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert table.cost("openai:gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.15 + 0.60 + 0.075)
    assert table.cost("openai:gpt-4o-2024-08-06", usage) == pytest.approx(2.5 + 10 + 1.25)
    assert table.cost("anthropic:claude-sonnet-4-6", Usage(cache_write_tokens=1_000_000)) == pytest.approx(3.75)
    assert table.cost("offline", usage) == 0
    assert table.cost("openai:my-llama", usage) is None


def test_cache_prices_give_what_caching_saved() -> None:
    table = PriceTable()
    sonnet = "anthropic:claude-sonnet-4-6"  # input 3.00, cache read 0.30, cache write 3.75 per million
    assert table.saved(sonnet, Usage(input_tokens=100, cache_read_tokens=1_000_000)) == pytest.approx(2.70)
    assert table.saved(sonnet, Usage(cache_write_tokens=1_000_000)) == pytest.approx(-0.75)  # the write surcharge
    usage = Usage(input_tokens=300, output_tokens=50, cache_read_tokens=9000, cache_write_tokens=700)
    price = table.price_of(sonnet)
    assert price is not None
    assert price.uncached_cost(usage) - price.cost(usage) == pytest.approx(price.saved(usage))
    assert table.saved("openai:gpt-4o", Usage(cache_read_tokens=1_000_000)) == pytest.approx(1.25)
    assert table.saved("openai:my-llama", usage) is None  # no price, no guess


def test_parse_since() -> None:
    now = datetime(2025, 6, 10, 12, 0, tzinfo=UTC)
    assert parse_since("7d", now=now) == now - timedelta(days=7)
    assert parse_since("24h", now=now) == now - timedelta(hours=24)
    assert parse_since("all") is None
    assert parse_since("2025-06-01") == datetime(2025, 6, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="7d, 24h"):
        parse_since("last tuesday")


async def _seed(db_path: Path) -> None:
    async with await StateDB.open(db_path, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        await _record(Ledger(db))


async def _record(ledger: Ledger) -> None:
    now = datetime.now(UTC)
    old = (now - timedelta(days=30)).isoformat(timespec="seconds")
    u = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=500)
    await ledger.record_llm_call(LLMCallRecord("anthropic", "anthropic:claude-sonnet-4-6", "ok", u, 0.0061,
                                               900.0, role="finance", session_key="board:finance",
                                               saved_usd=PriceTable().saved("anthropic:claude-sonnet-4-6", u)))
    await ledger.record_llm_call(LLMCallRecord("openai", "openai:gpt-4o-mini", "ok", u, 0.0003, 400.0,
                                               role="research", session_key="board:research", meeting_id="m-7"))
    await ledger.record_llm_call(LLMCallRecord("openai", "openai:gpt-4o-mini", "rate_limit", Usage(), 0.0, 20.0,
                                               role="research", session_key="board:research"))
    await ledger.record_llm_call(LLMCallRecord("openai", "openai:local", "ok", u, None, 100.0, role="critic"))
    await ledger.record_llm_call(LLMCallRecord("anthropic", "anthropic:claude-sonnet-4-6", "ok", u, 5.0, 1.0,
                                               role="finance", ts=old))


@pytest.mark.backends
async def test_summary_groups(database: Database) -> None:
    ledger = Ledger(database)
    await _record(ledger)
    by_role = await ledger.summary(since=parse_since("7d"), by="role")
    assert [(r.key, r.calls, r.failed) for r in by_role] == \
        [("finance", 1, 0), ("research", 2, 1), ("critic", 1, 0)]
    assert by_role[0].cost_usd == pytest.approx(0.0061) and by_role[0].cache_read_tokens == 500
    assert by_role[2].unpriced == 1
    everything = await ledger.total(since=None)
    assert everything.calls == 5 and everything.cost_usd == pytest.approx(5.0064)
    meetings = {r.key: r.calls for r in await ledger.summary(by="meeting")}
    assert meetings == {"m-7": 1, "(none)": 4}
    days = await ledger.summary(by="day")
    assert len(days) == 2 and days[0].key < days[1].key
    with pytest.raises(ValueError):
        await ledger.summary(by="colour")


def test_sabha_cost_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "sabha.yaml"
    config.write_text("workspace: ./workspace\ndata_dir: ./sessions\n", encoding="utf-8")
    asyncio.run(_seed(tmp_path / "sessions" / "sabha.db"))

    assert main(["cost", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Model costs since") and "by role" in lines[0]
    assert lines[1].split() == ["role", "calls", "failed", "fresh", "in", "cached", "in", "cached", "output",
                                "cost", "USD", "saved", "USD", "avg", "ms"]
    # finance: 1000 fresh, 500 read from the cache (33%), saved 500 x (3.00 - 0.30) / 1e6 USD
    assert lines[2].split() == ["finance", "1", "0", "1000", "500", "33%", "200", "0.0061", "0.0014", "900"]
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[1] == "4" and "0.0064*" in total  # the unpriced call is flagged
    assert "add it under llm.prices" in out
    assert "Prompt cache: 1500 input tokens read from it (33% of all input)" in out and "saved 0.0014 USD" in out

    assert main(["cost", "--config", str(config), "--by", "model", "--since", "all"]) == 0
    out = capsys.readouterr().out
    assert "anthropic:claude-sonnet-4-6" in out and "5.0061" in out and "since the beginning" in out

    assert main(["cost", "--config", str(config), "--json", "--by", "meeting"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["key"] for r in data["rows"]} == {"m-7", "(none)"}
    assert data["total"]["cache_read_tokens"] == 1500 and data["total"]["saved_usd"] == pytest.approx(0.00135)

    assert main(["cost", "--config", str(config), "--since", "whenever"]) == 2
    assert "7d, 24h" in capsys.readouterr().err


def test_sabha_cost_without_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "sabha.yaml"
    config.write_text("workspace: ./workspace\ndata_dir: ./sessions\n", encoding="utf-8")
    assert main(["cost", "--config", str(config)]) == 0
    assert "nothing has been recorded" in capsys.readouterr().out


@pytest.mark.backends
async def test_cost_command_in_chat(workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    model = ScriptedModel()
    board = await scripted_board(workspace, data_dir, model, prices=PRICES, state=state_url)
    try:
        await board.handle(envelope("@finance hello"))
        await board.handle(envelope("@critic hello"))
        reply = await board.handle(envelope("/cost"))
        assert reply.kind == "command"
        assert "in the last 7d, by role" in reply.text
        assert "finance" in reply.text and "critic" in reply.text and "total" in reply.text
        by_model = await board.handle(envelope("/cost all model"))
        assert "scripted:main" in by_model.text and "since the beginning" in by_model.text
        bad = await board.handle(envelope("/cost yesterday-ish"))
        assert "Usage: /cost" in bad.text
        help_text = (await board.handle(envelope("/help"))).text
        assert "/cost" in help_text and "/compact" in help_text
    finally:
        await board.close()


async def test_migrations_are_named_and_applied(tmp_path: Path) -> None:
    async with await StateDB.open(tmp_path / "s.db", BOARD_MIGRATIONS) as db:
        names = [r["name"] for r in await db.fetchall("SELECT name FROM schema_migrations ORDER BY name")]
    assert {"0002_llm_calls", "0003_tool_calls"} <= set(names)
