"""Button presses in shapes someone else recorded: pywa's webhook fixtures of an interactive reply-button
press and a template quick-reply press (tests/data/pywa/callback_button.json, verbatim from david-lev/pywa
tests/data/updates/callback_button.json). As recorded, their ids are not Sabha commands, so the press is its
title; with Sabha's command as the id or payload (what Sabha's own buttons carry), the press is that command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.channels.whatsapp.inbound import InboundMessage, parse_notification, read_items

FIXTURES = json.loads((Path(__file__).parents[3] / "data" / "pywa" / "callback_button.json")
                      .read_text(encoding="utf-8"))


def _press(update: dict[str, Any]) -> InboundMessage:
    [item] = [i for i in read_items(parse_notification(json.dumps(update).encode())) if isinstance(i, InboundMessage)]
    return item


@pytest.mark.parametrize("kind", ["button", "quick_reply"])
def test_a_press_as_recorded_is_its_title_from_the_right_person(kind: str) -> None:
    press = _press(FIXTURES[kind])
    assert (press.text, press.user, press.bsuid, press.name) == ("title", "972987654321",
                                                                 "US.13491208655302741918", "Test Name")


@pytest.mark.parametrize("kind", ["button", "quick_reply"])
def test_a_press_carrying_a_sabha_command_is_that_command(kind: str) -> None:
    update = json.loads(json.dumps(FIXTURES[kind]))
    message = update["entry"][0]["changes"][0]["value"]["messages"][0]
    if kind == "button":
        message["interactive"]["button_reply"]["id"] = "/ratify m-20261125-1200-ab12"
    else:
        message["button"]["payload"] = "/ratify m-20261125-1200-ab12"
    assert _press(update).text == "/ratify m-20261125-1200-ab12"
