"""The Slack channel's pure pieces: Markdown as mrkdwn (never failing), long texts split, events read from payloads
other projects wrote (tests/data/slack/, sources in SOURCES.md), the signature check with slack_sdk's verifier."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.signature import SignatureVerifier

from bot.channels.slack.config import SlackSection
from bot.channels.slack.format import MAX_TEXT, split_text, to_mrkdwn
from bot.channels.slack.inbound import (
    SlackEventKind,
    SlackIgnored,
    SlackMessage,
    SlackRequestKind,
    SlackSignatureProblem,
    parse_request,
    read_event,
    signature_problem,
)
from bot.channels.slack.places import Placement, SlackPlaceKind
from tests.support.fakes.slack_api import SIGNING_SECRET, sign

DATA = Path(__file__).resolve().parents[3] / "data" / "slack"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return data


def read(name: str, bot_user: str = "U0APP", bot_id: str = "B0APP") -> SlackMessage | SlackIgnored:
    parsed = parse_request((DATA / name).read_bytes())
    assert parsed.kind is SlackRequestKind.EVENT and parsed.event is not None
    return read_event(parsed.event, bot_user=bot_user, bot_id=bot_id)


def test_markdown_becomes_mrkdwn() -> None:
    text = to_mrkdwn("# Plan\n\nWe **must** cut *costs* and ~~hire~~. See [the sheet](https://x.test/a?b=1&c=2).\n\n"
                     "- one\n- two\n\n1. first\n2. second\n\n`a < b` and\n\n```python\nif a < b:\n    pass\n```")
    assert text.startswith("*Plan*\n\nWe *must* cut _costs_ and ~hire~. See <https://x.test/a?b=1&amp;c=2|the sheet>.")
    assert "• one\n• two" in text and "1. first\n2. second" in text
    assert "`a &lt; b`" in text and "```\nif a &lt; b:\n    pass\n```" in text


@pytest.mark.parametrize("odd", ["**unclosed", "[x](", "<script>", "* * *", "|||", "```", "> > >", "\x00", "_a*b_c*",
                                 "[a](javascript:alert(1))", "![img](https://x.test/i.png)"])
def test_odd_markdown_never_fails_and_stays_escaped(odd: str) -> None:
    text = to_mrkdwn(odd)
    assert isinstance(text, str) and "<script>" not in text and "<javascript:" not in text


def test_long_answers_split_at_boundaries_and_code_blocks_reopened() -> None:
    parts = split_text("intro\n\n```\n" + "x = 1\n" * 1500 + "```\n\nend")
    assert len(parts) >= 3 and all(len(p) <= MAX_TEXT for p in parts)
    assert all(p.count("```") % 2 == 0 for p in parts), "each part's code block is closed"
    assert split_text("   ") == []


def test_a_person_s_post_an_edit_and_a_deletion_read_from_bolt_python_s_payloads() -> None:
    post = read("user_message.json")
    assert isinstance(post, SlackMessage) and post.kind is SlackEventKind.MESSAGE
    assert (post.user, post.channel, post.message_id, post.thread_ts) == ("W111", "C111", "C111/1610261659.001400",
                                                                         None)
    assert post.text == "Hi there! Thanks for sharing the info!"
    broadcast = read("thread_broadcast.json")
    assert isinstance(broadcast, SlackMessage) and broadcast.thread_ts == "1633663824.000500"
    edit = read("message_changed.json")
    assert isinstance(edit, SlackMessage) and edit.kind is SlackEventKind.EDIT
    assert edit.ts == "1665102338.901939", "the edited post is the previous message's ts"
    deleted = read("message_deleted.json")
    assert isinstance(deleted, SlackMessage) and deleted.kind is SlackEventKind.DELETE
    assert deleted.message_id == "C111/1665368619.804829"


def test_bots_the_app_itself_and_other_events_are_ignored() -> None:
    for name in ("bot_message.json", "classic_bot_message.json", "reaction_added.json"):
        assert isinstance(read(name), SlackIgnored), name
    own = fixture("user_message.json")["event"]
    assert isinstance(read_event({**own, "user": "U0APP"}, bot_user="U0APP", bot_id="B0APP"), SlackIgnored)
    joined = {**own, "subtype": "channel_join"}
    assert isinstance(read_event(joined, bot_user="U0APP", bot_id="B0APP"), SlackIgnored)


def test_an_app_mention_and_its_message_twin_are_one_post() -> None:
    event = fixture("user_message.json")["event"]
    mention = {k: v for k, v in event.items() if k != "channel_type"} | {"type": "app_mention",
                                                                         "text": "<@U0APP> finance: runway?"}
    one, two = read_event(event, bot_user="U0APP", bot_id="B"), read_event(mention, bot_user="U0APP", bot_id="B")
    assert isinstance(one, SlackMessage) and isinstance(two, SlackMessage)
    assert one.message_id == two.message_id
    assert two.text == "finance: runway?", "the app's own mention is dropped"


def test_the_url_verification_example_from_slack_s_docs() -> None:
    parsed = parse_request((DATA / "url_verification.json").read_bytes())
    assert parsed.kind is SlackRequestKind.CHALLENGE
    assert parsed.challenge == "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"


def test_signatures_missing_wrong_and_stale_are_told_apart() -> None:
    verifier = SignatureVerifier(SIGNING_SECRET)
    body = (DATA / "user_message.json").read_bytes()
    assert signature_problem(verifier, body, sign(body)) is None
    assert signature_problem(verifier, body, {}) is SlackSignatureProblem.MISSING
    assert signature_problem(verifier, body, sign(body, "another-secret")) is SlackSignatureProblem.WRONG
    stale = sign(body, timestamp=int(time.time()) - 6 * 60)
    assert signature_problem(verifier, body, stale) is SlackSignatureProblem.STALE
    assert signature_problem(verifier, body + b" ", sign(body)) is SlackSignatureProblem.WRONG


def test_places_a_thread_per_conversation_the_advisor_s_channel_and_dms() -> None:
    places = Placement("C0BOARD", {"finance": "C0FIN"})
    base = SlackMessage(SlackEventKind.MESSAGE, "C0BOARD", "channel", "U1", "hi", "100.000001", None)
    top = places.place(base)
    assert top is not None and (top.kind, top.chat_id, top.thread_ts, top.role_hint) == (
        SlackPlaceKind.BOARD, "C0BOARD/100.000001", "100.000001", None)
    reply = places.place(SlackMessage(SlackEventKind.MESSAGE, "C0BOARD", "channel", "U1", "more", "101.000001",
                                      "100.000001"))
    assert reply is not None and reply.chat_id == top.chat_id, "a reply in the thread is the same conversation"
    fin = places.place(SlackMessage(SlackEventKind.MESSAGE, "C0FIN", "channel", "U1", "hi", "102.000001", None))
    assert fin is not None and fin.role_hint == "finance" and fin.is_group
    dm = places.place(SlackMessage(SlackEventKind.MESSAGE, "D0ME", "im", "U1", "hi", "103.000001", None))
    assert dm is not None and (dm.kind, dm.chat_id, dm.thread_ts, dm.is_group) == (SlackPlaceKind.DM, "D0ME", None,
                                                                                  False)
    assert places.place(SlackMessage(SlackEventKind.MESSAGE, "C0ELSE", "channel", "U1", "hi", "1.1", None)) is None


def test_config_names_a_channel_name_given_for_an_id() -> None:
    with pytest.raises(ValueError, match="not a Slack channel id"):
        SlackSection.model_validate({"board_channel": "#general"})
    with pytest.raises(ValueError, match="own channel"):
        SlackSection.model_validate({"channels": {"finance": "C1", "critic": "C1"}})
    section = SlackSection.model_validate({"channels": {"Finance": "c0fin"}})
    assert section.channels == {"finance": "C0FIN"}
