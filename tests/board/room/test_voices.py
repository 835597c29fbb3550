"""Voices (issue 13): temperature (and model) per soul front matter and board.agents.<role>, on both
wire formats; the roundtable's hot debaters and cool summarizer; owners its summarizer names; the
model shown when members differ."""

from __future__ import annotations

import json
from pathlib import Path

from board.app import Board
from board.llm.base import LLMRequest
from board.room.meeting import MeetingSettings
from board.room.roundtable import parse_input, run_roundtable
from tests.support.board import board_with, last_user, schema_of
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.llm import anthropic_board, envelope, openai_board


def set_front_matter(path: Path, line: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("---\n", f"---\n{line}\n", 1), encoding="utf-8")


UNSET = "unset"


async def temperatures_sent(board: Board, fake: FakeOpenAI | FakeAnthropic, *questions: str) -> list[object]:
    """Ask ``questions`` in turn, close the board; the temperature on each request the fake received."""
    try:
        for question in questions:
            await board.handle(envelope(question))
    finally:
        await board.close()
    return [request.body.get("temperature", UNSET) for request in fake.requests]


async def test_temperature_from_config_reaches_the_openai_wire(
    tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text("Runway is 14 months.")
    fake_openai.script_text("Hello.")
    board = await openai_board(tmp_path, workspace, fake_openai, """
board:
  agents:
    finance: {temperature: 0.2}
""")
    # finance's from config; general's unset: the provider's default
    assert await temperatures_sent(board, fake_openai, "@finance what is our runway?", "hello") == [0.2, UNSET]


async def test_temperature_from_the_soul_reaches_the_anthropic_wire_and_config_wins(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    set_front_matter(workspace / "board" / "finance.soul.md", "temperature: 0.9")
    set_front_matter(workspace / "board" / "critic.soul.md", "temperature: 0.9")
    for _ in range(2):
        fake_anthropic.script_text("Noted.")
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, """
board:
  agents:
    critic: {temperature: 0.1}
""")
    questions = ["@finance what is our runway?", "@critic what could go wrong?"]
    assert await temperatures_sent(board, fake_anthropic, *questions) == [0.9, 0.1]


SEED_004_FULL_TEST = {
    "prompt": "How can we reach AI startup CTOs who just raised Series A?",
    "context": "We sell developer tools. Our best customers are technical founders.",
    "learnings": ["GitHub-based targeting has 15% response rate",
                  "Personalization on recent news increases opens 2x"],
}


def roundtable_model(tasks: list[dict[str, str]]) -> ScriptedModel:
    def answer(request: LLMRequest) -> Step:
        role, schema = request.persona.role, schema_of(request)
        if schema is not None and "tasks" in schema.get("properties", {}):
            return say(json.dumps({"tasks": tasks}))
        if schema is not None and "action_items" in schema.get("properties", {}):
            return say(json.dumps({"recommendation": "Target fresh Series A CTOs via GitHub", "rationale": "2x opens",
                                   "consensus_points": [], "dissent": [], "action_items": tasks,
                                   "open_questions": []}))
        if schema is not None and "position" in schema.get("properties", {}):
            return say(json.dumps({"position": "support", "confidence": 0.7, "assumption": "GitHub data is fresh"}))
        return say(f"{role.upper()} idea for: {last_user(request)[:40]}\nSTANCE: "
                   + json.dumps({"position": "conditional", "confidence": 0.6, "assumption": "CTOs read GitHub"}))

    return ScriptedModel(default=answer)


async def test_seed_004_inputs_give_3_to_5_tasks_owned_as_its_summarizer_names_them(
    workspace: Path, data_dir: Path
) -> None:
    tasks = [{"task": "Monitor Crunchbase for Series A raises in AI/ML", "owner": "Orchestrator"},
             {"task": "Build a Crunchbase scraper tool", "owner": "the Builder"},
             {"task": "Lead with congratulations plus one GitHub insight (quick win)", "owner": "director"},
             {"task": "Test two subject lines this week", "owner": "business"}]
    model = roundtable_model(tasks)
    board = await board_with(workspace, data_dir, model)
    try:
        output = await run_roundtable(board.parts.room, parse_input(json.dumps(SEED_004_FULL_TEST)))
        assert 3 <= len(output["summary"]) <= 5 and not output.get("best_effort")
        assert [s.rsplit("(Owner: ", 1)[1] for s in output["summary"]] == [
            "Orchestrator)", "Builder)", "Director)", "business)"]
        # hot debaters, a cool summarizer: seed 004's values (0.8 and 0.3)
        temps = {r.role: r.request.temperature for r in model.requests}
        assert temps["artist"] == temps["business"] == temps["tech"] == 0.8 and temps["summarizer"] == 0.3
        request = next(r for r in model.requests_for("tech") if "round 2 of" in r.request.context_text).request
        assert "GitHub-based targeting has 15% response rate" in request.system_text  # the learnings, every turn
    finally:
        await board.close()


async def test_output_names_the_model_when_members_differ(workspace: Path, data_dir: Path) -> None:
    set_front_matter(workspace / "board" / "critic.soul.md", "model: scripted:contrarian")
    model = ScriptedModel()
    model.default = lambda request: say(  # type: ignore[assignment]
        json.dumps({"agenda": "a", "questions": {}}) if schema_of(request) else
        "view\nSTANCE: " + json.dumps({"position": "conditional", "confidence": 0.5, "assumption": "x holds"}))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1))
    try:
        result = await board.parts.room.hold("Expand to Europe?")
        assert "**🦉 Critic (scripted:contrarian):**" in result.minutes
        assert "**💰 Finance (scripted:main):**" in result.minutes
    finally:
        await board.close()
