"""Thinking per agent (issue 25, seed 003's ``thinkingDefault``): a role's ``thinking:`` (soul front matter,
``board.agents.<role>.thinking``, else ``llm.thinking``) reaches the request bodies the fake Anthropic and
OpenAI servers receive (Anthropic's ``thinking`` budget with ``max_tokens`` above it; OpenAI's
``reasoning_effort``), is recorded in the ledger, and a thinking block in the answer is neither shown nor
written to the transcript. Through the real ``sabha ask``."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path

from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI

REPO = Path(__file__).resolve().parents[3]
SECRET = "PRIVATE-REASONING-7731: the user seems anxious about cash"


async def sabha(folder: Path, tmp_path: Path, *argv: str) -> str:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", *argv, cwd=folder, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def board(tmp_path: Path, *config: str) -> Path:
    folder = tmp_path / "board"
    await sabha(tmp_path, tmp_path, "init", str(folder))
    (folder / "sabha.yaml").write_text("\n".join(["workspace: ./workspace", "data_dir: ./sessions", *config, ""]),
                                       encoding="utf-8")
    return folder


def ledger(folder: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(folder / "sessions" / "sabha.db") as db:
        return db.execute("SELECT role, thinking FROM llm_calls ORDER BY id").fetchall()


async def test_anthropic_thinking_from_the_soul_is_sent_recorded_and_kept_from_the_user(
        tmp_path: Path, fake_anthropic: FakeAnthropic) -> None:
    folder = await board(tmp_path, "llm:", "  model: anthropic:claude-sonnet-4-5", "  max_tokens: 800",
                         "  thinking: low", "  providers:", "    anthropic:", "      api_key: sk-ant-test",
                         f"      base_url: {fake_anthropic.base_url}")
    soul = folder / "workspace" / "board" / "critic.soul.md"
    soul.write_text(soul.read_text(encoding="utf-8").replace("emoji: 🦉\n", "emoji: 🦉\nthinking: high\n", 1),
                    encoding="utf-8")
    fake_anthropic.script_text("Raise prices by 10% for new customers only.", thinking=SECRET)
    fake_anthropic.script_text("Start with a pilot.")
    out = await sabha(folder, tmp_path, "ask", "--role", "critic", "Should we raise prices?")
    assert "Raise prices by 10% for new customers only." in out and "PRIVATE-REASONING" not in out
    await sabha(folder, tmp_path, "ask", "--role", "finance", "And the runway?")
    critic, finance = (r.body for r in fake_anthropic.requests)
    assert critic["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert critic["max_tokens"] == 16384 + 800 and "temperature" not in critic
    assert finance["thinking"] == {"type": "enabled", "budget_tokens": 1024}  # llm.thinking
    assert ledger(folder) == [("critic", "high"), ("finance", "low")]
    transcripts = "".join(p.read_text(encoding="utf-8") for p in (folder / "sessions").rglob("*.jsonl"))
    assert "Raise prices by 10%" in transcripts and "PRIVATE-REASONING" not in transcripts


async def test_openai_reasoning_effort_per_role_from_the_config(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    folder = await board(tmp_path, "llm:", "  model: openai:o4-mini", "  thinking: off", "  providers:", "    openai:",
                         "      api_key: sk-test", f"      base_url: {fake_openai.base_url}", "board:",
                         "  agents:", "    critic:", "      thinking: medium")
    fake_openai.script_text("Price on value.")
    fake_openai.script_text("Eighteen months.")
    assert "Price on value." in await sabha(folder, tmp_path, "ask", "--role", "critic", "Pricing?")
    await sabha(folder, tmp_path, "ask", "--role", "finance", "Runway?")
    critic, finance = (r.body for r in fake_openai.requests)
    assert critic["reasoning_effort"] == "medium"
    assert "reasoning_effort" not in finance  # llm.thinking defaults to off
    assert ledger(folder) == [("critic", "medium"), ("finance", "off")]


async def test_the_owner_may_keep_the_thinking_in_the_transcript(tmp_path: Path,
                                                                  fake_anthropic: FakeAnthropic) -> None:
    folder = await board(tmp_path, "llm:", "  model: anthropic:claude-sonnet-4-5", "  thinking: medium",
                         "  keep_thinking: true", "  providers:", "    anthropic:", "      api_key: sk-ant-test",
                         f"      base_url: {fake_anthropic.base_url}")
    fake_anthropic.script_text("Keep the price; add an annual plan.", thinking=SECRET)
    out = await sabha(folder, tmp_path, "ask", "--role", "critic", "Pricing?")
    assert "Keep the price; add an annual plan." in out and "PRIVATE-REASONING" not in out
    assert fake_anthropic.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    [answer] = [json.loads(line) for p in (folder / "sessions").rglob("*.jsonl")
                for line in p.read_text(encoding="utf-8").splitlines() if '"assistant"' in line]
    assert answer["thinking"] == SECRET and "PRIVATE-REASONING" not in answer["text"]


async def test_gemini_thinking_budget_per_role_and_off_where_the_model_allows(tmp_path: Path) -> None:
    """Gemini's ``thinkingConfig.thinkingBudget``: a role's level as tokens (with ``maxOutputTokens``
    above it, since Gemini's thinking draws on the same allowance), ``off`` as 0 on a 2.5 Flash model
    (else it thinks by default and may spend the whole answer's allowance); thought parts never shown."""
    from tests.support.fakes.gemini_api import FakeGemini

    async with FakeGemini() as fake:
        folder = await board(tmp_path, "llm:", "  model: google:gemini-2.5-flash", "  max_tokens: 800",
                             "  providers:", "    google:", "      api_key: gemini-test",
                             f"      base_url: {fake.base_url}", "board:", "  agents:", "    critic:",
                             "      thinking: high")
        fake.script_text("Raise prices by 10% for new customers only.", thinking=SECRET)
        fake.script_text("Eighteen months.")
        out = await sabha(folder, tmp_path, "ask", "--role", "critic", "Should we raise prices?")
        assert "Raise prices by 10% for new customers only." in out and "PRIVATE-REASONING" not in out
        await sabha(folder, tmp_path, "ask", "--role", "finance", "Runway?")
        critic, finance = (r.body["generationConfig"] for r in fake.requests)
    # the SDK writes the nested field in its proto name (the API reads thinking_budget and thinkingBudget alike)
    assert critic["thinkingConfig"] == {"thinking_budget": 16384, "include_thoughts": True}
    assert critic["maxOutputTokens"] == 16384 + 800
    assert finance["thinkingConfig"] == {"thinking_budget": 0} and finance["maxOutputTokens"] == 800  # off
    assert ledger(folder) == [("critic", "high"), ("finance", "off")]
    transcripts = "".join(p.read_text(encoding="utf-8") for p in (folder / "sessions").rglob("*.jsonl"))
    assert "Raise prices by 10%" in transcripts and "PRIVATE-REASONING" not in transcripts


async def test_gemini_off_is_left_to_a_model_that_cannot_turn_thinking_off(tmp_path: Path) -> None:
    from tests.support.fakes.gemini_api import FakeGemini

    async with FakeGemini() as fake:
        folder = await board(tmp_path, "llm:", "  model: google:gemini-2.5-pro", "  thinking: low", "  providers:",
                             "    google:", "      api_key: gemini-test", f"      base_url: {fake.base_url}",
                             "board:", "  agents:", "    finance:", "      thinking: 'off'")
        fake.script_text("Price on value.")
        fake.script_text("Eighteen months.")
        await sabha(folder, tmp_path, "ask", "--role", "critic", "Pricing?")
        await sabha(folder, tmp_path, "ask", "--role", "finance", "Runway?")
        critic, finance = (r.body["generationConfig"] for r in fake.requests)
    assert critic["thinkingConfig"] == {"thinking_budget": 1024, "include_thoughts": True}  # llm.thinking: low
    assert "thinkingConfig" not in finance  # 2.5 Pro always thinks: 0 would be refused
    assert ledger(folder) == [("critic", "low"), ("finance", "off")]


async def test_the_owner_may_keep_geminis_thought_summary_in_the_transcript(tmp_path: Path) -> None:
    from tests.support.fakes.gemini_api import FakeGemini

    async with FakeGemini() as fake:
        folder = await board(tmp_path, "llm:", "  model: google:gemini-2.5-flash", "  thinking: medium",
                             "  keep_thinking: true", "  providers:", "    google:", "      api_key: gemini-test",
                             f"      base_url: {fake.base_url}")
        fake.script_text("Keep the price; add an annual plan.", thinking=SECRET)
        out = await sabha(folder, tmp_path, "ask", "--role", "critic", "Pricing?")
        assert fake.requests[0].body["generationConfig"]["thinkingConfig"]["thinking_budget"] == 4096
    assert "Keep the price; add an annual plan." in out and "PRIVATE-REASONING" not in out
    [answer] = [json.loads(line) for p in (folder / "sessions").rglob("*.jsonl")
                for line in p.read_text(encoding="utf-8").splitlines() if '"assistant"' in line]
    assert answer["thinking"] == SECRET and "PRIVATE-REASONING" not in answer["text"]
