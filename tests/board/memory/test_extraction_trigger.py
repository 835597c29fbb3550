"""When the memory's extraction calls the model (issue 44: a 40-turn chat made 66 model calls where it made 44):
only after a message that says something about its writer, at most ``memory.extract_per_hour`` a person;
every call's purpose is in the ledger and ``sabha cost --by purpose`` shows them. Counts, never times."""

from __future__ import annotations

import ast
import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from board.app import Board
from board.llm.purpose import CallPurpose
from board.memory.facts import MemorySettings
from board.storage.url import StateURL
from bot.app import all_migrations
from bot.cli.main import main
from tests.support.fakes.scripted_model import ScriptedModel
from tests.support.knowledge import board_settings, rows
from tests.support.llm import envelope

OWNER = "console:owner"
ROOT = Path(__file__).resolve().parents[3]

#: Forty messages of small talk, questions and requests: nothing a person states about themselves.
SMALL_TALK = [
    "Hi there!", "How are you today?", "Thanks, that helps.", "Good morning!", "I see.", "I agree.",
    "Great, thanks!", "Tell me a joke.", "What's a good habit for a Monday?", "Nice one.",
    "Okay, sounds good.", "Give me a quick tip for the day.", "Can you say that more simply?", "Haha, fair.",
    "Which book would you suggest for a weekend?", "I'm fine, thanks!", "Summarise what we just said.",
    "Give me the risks of our warehouse plan in three bullets.", "Who would disagree with that, and why?",
    "Cool.", "What should I decide about the offsite, and by when?", "Me too.", "Makes sense.",
    "Tell me more about that.", "Any other thoughts?", "Thank you!", "Hmm, interesting.", "We'll see.",
    "Explain it like I'm five.", "Good night!", "Is that usual?", "Right.", "Got it, thanks.",
    "What would the critic say?", "Sounds fine to me.", "Please go on.", "I guess so.", "OK!",
    "Could you give an example?", "Bye for now.",
]
#: The same chat with five statements a person makes about themselves in it.
FACTS = {3: "I'm based in Pune.", 11: "We have 12 employees.", 19: "My budget for the offsite is 2 lakh.",
         27: "Please call me Asha.", 35: "I prefer short answers."}


async def chat(b: Board, messages: list[str]) -> None:
    for i, text in enumerate(messages):
        await b.handle(envelope(text, message_id=i + 1))
        await b.parts.memory_writer.settle(OWNER)


async def purposes(b: Board) -> dict[str, int]:
    return {r["purpose"]: r["n"] for r in await rows(
        b, "SELECT purpose, COUNT(*) AS n FROM llm_calls GROUP BY purpose")}


@pytest.mark.backends
async def test_forty_turns_of_small_talk_make_no_extraction_call(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    assert len(SMALL_TALK) == 40
    model = ScriptedModel()
    settings = board_settings(workspace, data_dir, model, state=state_url)
    async with await Board.open(settings, model.registry(), migrations=all_migrations()) as b:
        await chat(b, SMALL_TALK)
        by_purpose = await purposes(b)
    assert model.memory_requests == []
    assert by_purpose.get(CallPurpose.EXTRACTION, 0) == 0
    assert by_purpose[CallPurpose.TURN] == 40
    assert set(by_purpose) <= {CallPurpose.TURN, CallPurpose.COMPACTION}  # a summary every 20 or so messages


@pytest.mark.backends
async def test_a_chat_with_facts_makes_one_extraction_per_statement(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    settings = board_settings(workspace, data_dir, model, state=state_url)
    messages = [FACTS.get(i, text) for i, text in enumerate(SMALL_TALK)]
    async with await Board.open(settings, model.registry(), migrations=all_migrations()) as b:
        await chat(b, messages)
        by_purpose = await purposes(b)
    assert sorted(r.request.messages[-1].content for r in model.memory_requests) == sorted(FACTS.values())
    assert by_purpose[CallPurpose.EXTRACTION] == len(FACTS)
    assert by_purpose[CallPurpose.TURN] == 40


@pytest.mark.backends
async def test_extractions_are_capped_per_person_per_hour(workspace: Path, data_dir: Path,
        state_url: StateURL | None, caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedModel()
    settings = replace(board_settings(workspace, data_dir, model, state=state_url),
                       memory=MemorySettings(extract_per_hour=3))
    statements = [f"I'm based in city number {i}." for i in range(6)]
    with caplog.at_level(logging.INFO, logger="sabha.memory"):
        async with await Board.open(settings, model.registry(), migrations=all_migrations()) as b:
            await chat(b, statements)
            by_purpose = await purposes(b)
    assert len(model.memory_requests) == 3 and by_purpose[CallPurpose.EXTRACTION] == 3
    told = [r for r in caplog.records if "memory.extract_per_hour" in r.getMessage()]
    assert len(told) == 1  # said once for the hour, not once per skipped message


def test_sabha_cost_by_purpose(workspace: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = ScriptedModel()
    settings = board_settings(workspace, data_dir, model)

    async def talk() -> None:
        async with await Board.open(settings, model.registry(), migrations=all_migrations()) as b:
            await chat(b, ["I'm based in Pune.", "How are you?"])

    asyncio.run(talk())
    config = workspace.parent / "sabha.yaml"
    config.write_text(f"workspace: {workspace}\ndata_dir: {data_dir}\n", encoding="utf-8")
    assert main(["cost", "--config", str(config), "--by", "purpose", "--since", "all"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Model costs since the beginning") and "by purpose" in out[0]
    table = out[2:out.index(next(line for line in out if line.startswith("total"))) + 1]
    calls = {line.split()[0]: int(line.split()[1]) for line in table if not line.startswith("-")}
    assert calls == {"turn": 2, "extraction": 1, "total": 3}


def test_every_model_call_site_names_a_purpose_from_the_enum() -> None:
    """No call site passes a purpose as a bare string: each is a :class:`CallPurpose` member, so the ledger's
    purposes stay a closed set ``--by purpose`` can explain."""
    loose = []
    for path in sorted((ROOT / "board").rglob("*.py")) + sorted((ROOT / "bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "purpose" and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str):
                loose.append(f"{path.relative_to(ROOT)}:{node.value.lineno} purpose={node.value.value!r}")
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "purpose" and isinstance(value, ast.Constant) \
                            and str(value.value).isidentifier():  # a tag's value, not GROUPS' SQL
                        loose.append(f"{path.relative_to(ROOT)}:{value.lineno} {{'purpose': {value.value!r}}}")
    assert loose == []
