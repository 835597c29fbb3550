"""A reply's buttons as Discord components (read back by discord.py's own component parser), the command a
pressed one stands for, and Discord's documented interaction payloads (tests/data/discord/, copied from Discord's
API docs) read as presses and slash commands: Sabha's own, or left alone when they are another app's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import discord
import pytest
from discord.components import _component_factory

from board.commands.decisions import decision_buttons, settled_buttons
from board.envelope import Button
from bot.channels.discord.commands import SLASH_COMMANDS, definitions, slash_text
from bot.channels.discord.components import CUSTOM_ID_CHARS, button_view, command_of, component_rows, custom_id
from bot.channels.discord.interactions import (
    InteractionKind,
    interaction_of,
    invocation_from,
    message_id_of,
    quoted_message,
)

DATA = Path(__file__).resolve().parents[3] / "data" / "discord"


def fixture(name: str) -> dict[str, Any]:
    loaded = json.loads((DATA / name).read_text(encoding="utf-8"))
    assert "discord-api-docs" in loaded["source"]
    payload: dict[str, Any] = loaded["payload"]
    return payload


def test_decision_buttons_become_one_action_row_that_discord_py_reads_back() -> None:
    buttons = decision_buttons("m-20261129-ab12cd")
    rows = component_rows(buttons)
    assert len(rows) == 1 and rows[0]["type"] == 1
    row = _component_factory(rows[0])
    assert isinstance(row, discord.ActionRow)
    parsed = [c for c in row.children if isinstance(c, discord.Button)]
    assert [b.label for b in parsed] == ["Ratify", "Veto", "Revisit"]
    assert [b.style for b in parsed] == [discord.ButtonStyle.success, discord.ButtonStyle.danger,
                                         discord.ButtonStyle.secondary]
    assert [command_of(b.custom_id) for b in parsed] == [b.command for b in buttons]
    view = button_view(buttons)
    assert view is not None and view.is_persistent() and view.timeout is None


@pytest.mark.parametrize("button", [
    Button("Done", "/done 12"), Button("Snooze", "/snooze 12"), Button("Allow once", "/allow 3"),
    Button("Always allow tool", "/allow 3 always"), Button("Deny", "/deny 3"), Button("Start", "/start_meeting 9"),
    Button("Cancel", "/cancel_meeting 9"), Button("Can't tell", "/resolve 4 unknown"),
])
def test_every_kind_of_board_button_fits_and_reads_back(button: Button) -> None:
    value = custom_id(button)
    assert len(value) <= CUSTOM_ID_CHARS
    assert command_of(value) == button.command


def test_the_longest_command_a_button_may_carry_fits_discords_100_characters() -> None:
    longest = Button("Ratify", "/ratify " + "x" * 56)  # 64 bytes: board.envelope's limit
    assert len(custom_id(longest)) <= CUSTOM_ID_CHARS


def test_a_settled_decision_offers_one_button_that_shows_it() -> None:
    from board.decisions.ratify import DecisionRecord, Verdict

    record = DecisionRecord(meeting_id="m-1", topic="Pune", recommendation="go", verdict=Verdict.RATIFIED,
                            started_at="2026-11-29T10:00:00+00:00", channel="discord", chat_id="c")
    [only] = component_rows(settled_buttons(record))[0]["components"]
    assert only["label"].endswith("Ratified") and command_of(only["custom_id"]) == "/decision m-1"


@pytest.mark.parametrize("value", [None, "", "click_one", "sabha:", "sabha:ratify m-1", "other:/ratify m-1"])
def test_a_custom_id_that_is_not_sabhas_stands_for_no_command(value: str | None) -> None:
    assert command_of(value) is None


def test_discords_sample_component_interaction_is_another_apps_button_and_left_alone() -> None:
    assert invocation_from(fixture("interaction_component_example.json")) is None


def test_the_sample_component_interaction_with_sabhas_custom_id_is_the_pressers_command() -> None:
    payload = fixture("interaction_component_example.json")
    payload["data"]["custom_id"] = custom_id(Button("Ratify", "/ratify m-20261129-ab12cd"))
    found = invocation_from(payload)
    assert found is not None
    assert found.kind is InteractionKind.PRESS and found.text == "/ratify m-20261129-ab12cd"
    assert (found.interaction_id, found.token, found.application_id) == (
        "846462639134605312", "unique_interaction_token", "290926444748734465")
    assert (found.user_id, found.user_name) == ("53908232506183680", "Mason")
    assert (found.channel_id, found.guild_id, found.message_id) == (
        "345626669114982999", "290926798626357999", "844397162624450620")
    mid = message_id_of(found)
    assert mid == "844397162624450620:i:846462639134605312"
    assert interaction_of(mid) == "846462639134605312" and quoted_message(mid) == "844397162624450620"


def test_discords_sample_slash_command_is_not_one_of_sabhas() -> None:
    assert invocation_from(fixture("interaction_slash_example.json") | {"application_id": "1"}) is None


def test_the_sample_slash_interaction_as_board_is_the_question() -> None:
    payload = fixture("interaction_slash_example.json") | {"application_id": "1"}
    payload["data"] = {**payload["data"], "name": "board",
                       "options": [{"type": 3, "name": "question", "value": "Should we  open\na Pune office?"},
                                   {"type": 3, "name": "advisor", "value": "finance"}]}
    found = invocation_from(payload)
    assert found is not None and found.kind is InteractionKind.SLASH
    assert found.text == "@finance Should we open a Pune office?"
    assert message_id_of(found) == "i:786008729715212338"
    assert interaction_of("i:786008729715212338") == "786008729715212338"
    assert quoted_message("i:786008729715212338") is None


@pytest.mark.parametrize(("data", "text"), [
    ({"name": "board", "options": [{"name": "question", "value": "Hello"}]}, "Hello"),
    ({"name": "board", "options": [{"name": "question", "value": "   "}]}, None),
    ({"name": "meeting", "options": [{"name": "topic", "value": "Pricing"}]}, "/meeting Pricing"),
    ({"name": "decisions"}, "/decisions"),
    ({"name": "help"}, "/help"),
    ({"name": "cardsearch"}, None),
])
def test_each_slash_command_stands_for_the_words_a_person_would_type(data: dict[str, Any], text: str | None) -> None:
    assert slash_text(data) == text


def test_the_definitions_offer_the_advisors_as_choices() -> None:
    found = definitions({"general": "🏛 Chair", "finance": "💰 Finance"})
    assert [d["name"] for d in found] == [c.name for c in SLASH_COMMANDS]
    board = found[0]
    advisor = next(o for o in board["options"] if o["name"] == "advisor")
    assert advisor["choices"] == [{"name": "🏛 Chair", "value": "general"}, {"name": "💰 Finance", "value": "finance"}]
    assert all(len(d["description"]) <= 100 for d in found)


@pytest.mark.parametrize("value", ["123", "123:i:", "i:abc", "", None, "12:x:34"])
def test_an_ordinary_message_id_names_no_interaction(value: str | None) -> None:
    assert interaction_of(value) is None
