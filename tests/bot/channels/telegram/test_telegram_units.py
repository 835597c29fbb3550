"""Unit tests of the Telegram channel's parts: formatting and splitting, the status-edit
throttle, flood control, lanes and the access gate (no network, no PTB server)."""

from __future__ import annotations

import asyncio

import pytest

from bot.channels.telegram.format import (
    Entity,
    markdown_to_entities,
    plain_chunks,
    render,
    split_chunks,
    utf16_len,
)
from bot.channels.telegram.inbound import AccessGate, Place
from bot.channels.telegram.meeting import StatusThrottle
from bot.channels.telegram.outbound import Target
from bot.channels.telegram.ratelimit import FloodControl, RateSettings
from bot.config import ConfigError
from bot.config.load import parse_config
from tests.support.telegram import VirtualClock

# -- formatting ------------------------------------------------------------------------


def test_markdown_becomes_text_and_entities() -> None:
    text, entities = markdown_to_entities("Hi **Ravi** 👋 see `x=1` and [docs](https://e.x)")
    assert text == "Hi Ravi 👋 see x=1 and docs"
    assert [(e.type, e.offset, e.length) for e in entities] == [("bold", 3, 4), ("code", 15, 3), ("text_link", 23, 4)]
    assert entities[2].url == "https://e.x"


def test_broken_markdown_never_raises() -> None:
    for nasty in ("**unclosed _weird [x](y", "<b>html</b> & <i>", "```\nunterminated", "", "\\", "a_b_c"):
        chunks = render(nasty, header="💰 Finance")
        assert chunks and chunks[0].text.startswith("💰 Finance")


def test_open_tasks_do_not_look_done() -> None:
    """The minutes' action items are ``- [ ]`` tasks: an empty box, not telegramify's ☑."""
    text, _ = markdown_to_entities("- [ ] Size the market (owner: research)\n- [x] Done already")
    assert text.splitlines() == [
        "\N{BALLOT BOX} Size the market (owner: research)",
        "\N{WHITE HEAVY CHECK MARK} Done already",
    ]


def test_header_is_bold_and_shifts_entities() -> None:
    [chunk] = render("the **runway** is fine", header="💰 Finance")
    assert chunk.text == "💰 Finance\nthe runway is fine"
    assert chunk.entities[0] == Entity("bold", 0, utf16_len("💰 Finance"))
    bold = chunk.entities[1]
    units = chunk.text.encode("utf-16-le")
    assert units[bold.offset * 2:(bold.offset + bold.length) * 2].decode("utf-16-le") == "runway"


def test_split_prefers_paragraphs_then_lines_and_respects_utf16() -> None:
    para = "😀" * 1500  # 3000 UTF-16 units, 1500 code points
    chunks = split_chunks(f"{para}\n\n{para}\n\n{para}", [])
    assert [c.text for c in chunks] == [para, para, para]
    lines = "\n".join(f"line {i} " + "x" * 90 for i in range(100))
    chunks = split_chunks(lines, [])
    assert all(utf16_len(c.text) <= 4096 for c in chunks)
    assert all(c.text.startswith("line ") and c.text.endswith("x") for c in chunks)
    assert "\n".join(c.text for c in chunks) == lines


def test_split_hard_cuts_a_giant_word_and_clips_entities_into_both_chunks() -> None:
    text = "a" * 5000
    chunks = split_chunks(text, [Entity("bold", 0, 5000)])
    assert [utf16_len(c.text) for c in chunks] == [4096, 904]
    assert [c.entities for c in chunks] == [(Entity("bold", 0, 4096),), (Entity("bold", 0, 904),)]


def test_empty_text_gives_no_chunks_but_a_header_alone_is_sent() -> None:
    assert split_chunks("  \n ", []) == []
    assert plain_chunks("") == []
    assert [c.text for c in render("", header="🧭 General")] == ["🧭 General"]


def test_angle_brackets_stay_literal_text() -> None:
    """Angle brackets are text, not HTML: a generic type, a placeholder, a comparison and a
    tag an answer quotes all reach the user exactly as written (they used to vanish)."""
    cases = {
        "Use List<String> here": "Use List<String> here",
        "/ask <role> <message>": "/ask <role> <message>",
        "a < b > c and x<y>z": "a < b > c and x<y>z",
        "<script>alert(1)</script>": "<script>alert(1)</script>",
        "<b>not bold</b> <!-- a comment -->": "<b>not bold</b> <!-- a comment -->",
        "before\n\n<div>\nhi\n</div>\n\nafter": "before\n\n<div>\nhi\n</div>\n\nafter",
        "<?php echo 1; ?>": "<?php echo 1; ?>",
    }
    for markdown, shown in cases.items():
        assert markdown_to_entities(markdown) == (shown, []), markdown


def test_angle_brackets_beside_markdown_that_still_renders() -> None:
    text, entities = markdown_to_entities(
        "**Note:** `Map<K, V>` beats <T> in [docs](https://e.x)\n\n```java\nList<String> xs;\n```"
    )
    assert text == "Note: Map<K, V> beats <T> in docs\n\nList<String> xs;"
    assert [(e.type, e.offset, e.length) for e in entities] == [
        ("bold", 0, 5), ("code", 6, 9), ("text_link", 29, 4), ("pre", 35, 16),
    ]
    assert entities[2].url == "https://e.x"
    assert entities[3].language == "java"


def test_help_text_shows_its_placeholders() -> None:
    """The /help answer, as the user reads it in Telegram (it arrived as ``@          ask one role``)."""
    from board.commands.builtin import HELP_TEXT

    [chunk] = render(HELP_TEXT, header="🧭 General")
    lines = chunk.text.splitlines()
    assert lines[0] == "🧭 General"
    assert "@<role> <message>         ask one role, e.g. @finance what is our runway?" in lines
    assert "/ask <role> <message>     the same" in lines
    assert "<role>: <message>         the same" in lines
    assert any(line.startswith("<message>") and line.endswith("or this topic's role") for line in lines)


def test_split_keeps_angle_brackets_and_the_utf16_limit() -> None:
    markdown = "\n".join(f"line {i} <T> **x<y>** 😀" for i in range(400))
    chunks = render(markdown)
    assert len(chunks) > 1
    assert all(utf16_len(c.text) <= 4096 for c in chunks)
    assert "\n".join(c.text for c in chunks) == "\n".join(f"line {i} <T> x<y> 😀" for i in range(400))
    for c in chunks:
        for e in c.entities:
            piece = c.text.encode("utf-16-le")[e.offset * 2:(e.offset + e.length) * 2].decode("utf-16-le")
            assert (e.type, piece) == ("bold", "x<y>")


def test_target_never_sends_general_thread_or_dm_threads() -> None:
    assert Target(-100, None).topic is None
    assert Target(-100, 1).topic is None  # General's id is never sent
    assert Target(-100, 77).topic == 77
    assert Target(42, 77).topic is None  # private chats have no topics here


# -- status throttle ---------------------------------------------------------------------


def test_status_throttle_keeps_one_pending_edit_and_the_interval() -> None:
    clock = VirtualClock()
    throttle = StatusThrottle(3.0, clock=clock.now)
    throttle.shown_now("v0")
    assert not throttle.pending
    for i in range(1, 6):
        throttle.update(f"v{i}")
    assert throttle.pending and throttle.wanted == "v5"  # the latest state wins; one edit pending
    assert throttle.wait_s() == pytest.approx(3.0)
    clock.t += 1.0
    assert throttle.wait_s() == pytest.approx(2.0)
    clock.t += 2.0
    assert throttle.wait_s() == 0
    throttle.edited("v5")
    assert not throttle.pending and throttle.edits == 1 and throttle.wait_s() == pytest.approx(3.0)
    throttle.update("v5")  # no change: nothing to edit
    assert not throttle.pending


# -- flood control -------------------------------------------------------------------------


async def test_a_forum_has_one_budget_and_a_pause_holds_all_its_topics() -> None:
    clock = VirtualClock()
    flood = FloodControl(RateSettings(group_per_minute=60, group_burst=2), clock=clock.now, sleep=clock.sleep)
    assert flood.bucket(-100) is flood.bucket(-100)
    await flood.acquire(-100)
    await flood.acquire(-100)
    assert clock.waits == []
    await flood.acquire(-100)
    assert clock.waits == [pytest.approx(1.0)]
    clock.waits.clear()
    flood.pause(-100, 7)
    assert flood.paused_for(-100) == pytest.approx(7)
    await flood.acquire(-100)
    assert sum(clock.waits) == pytest.approx(7)
    clock.waits.clear()
    await flood.acquire(42)  # another chat is not held back
    assert clock.waits == []


async def test_try_acquire_never_waits_and_leaves_the_reserve() -> None:
    clock = VirtualClock()
    flood = FloodControl(RateSettings(group_per_minute=60, group_burst=5, private_burst=3),
                         clock=clock.now, sleep=clock.sleep)
    assert flood.try_acquire(-100, reserve=3)  # 5 tokens -> 4
    assert flood.try_acquire(-100, reserve=3)  # 4 -> 3: the reserve is left
    assert not flood.try_acquire(-100, reserve=3)  # one more would eat into the reserve
    assert flood.spare_in(-100, reserve=3) == pytest.approx(1.0)  # 60 a minute: a token a second
    clock.t += 1.0
    assert flood.try_acquire(-100, reserve=3)
    clock.t += 10.0  # full again, but a 429 pauses the chat
    flood.pause(-100, 5)
    assert not flood.try_acquire(-100) and flood.spare_in(-100) == pytest.approx(5.0)
    assert flood.try_acquire(42, reserve=3)  # the reserve is capped below a DM's burst of 3
    assert clock.waits == []  # it never slept


async def test_try_acquire_yields_to_anyone_waiting_for_the_chat() -> None:
    clock = VirtualClock()
    flood = FloodControl(RateSettings(group_per_minute=60, group_burst=2), clock=clock.now, sleep=clock.sleep)
    gate = asyncio.Event()

    async def slow_sleep(seconds: float) -> None:
        await gate.wait()
        clock.t += seconds

    flood.sleep = slow_sleep
    await flood.acquire(-100)
    await flood.acquire(-100)
    waiter = asyncio.create_task(flood.acquire(-100))  # a post waits for the next token
    await asyncio.sleep(0)
    clock.t += 5.0  # tokens are back, but the post is first in line
    assert not flood.try_acquire(-100)
    assert flood.spare_in(-100) >= 1.0
    gate.set()
    await waiter
    assert flood.try_acquire(-100)


# -- access -----------------------------------------------------------------------------------


def test_access_is_denied_by_default_and_groups_need_allowing() -> None:
    gate = AccessGate(allowed_user_ids=(42, 43), allowed_chat_ids=(-100,))
    assert gate.owner_id == 42
    assert gate.allows(42, Place(42, None, False))
    assert gate.allows(43, Place(-100, 7, True))
    assert not gate.allows(666, Place(666, None, False))
    assert not gate.allows(42, Place(-200, None, True))
    assert not gate.allows(None, Place(-100, None, True))
    assert not AccessGate().allows(42, Place(42, None, False))
    assert AccessGate().owner_id is None


# -- config ------------------------------------------------------------------------------------


def test_telegram_config_defaults_and_token_from_the_environment() -> None:
    config = parse_config("telegram:\n  token: ${TELEGRAM_BOT_TOKEN}\n  group_id: -100123\n", source="x",
                          env={"TELEGRAM_BOT_TOKEN": "1:abc"})
    tg = config.telegram
    assert tg.enabled and tg.token is not None and tg.token.get_secret_value() == "1:abc"
    assert tg.api_base_url == "https://api.telegram.org/bot"
    assert tg.mode == "polling" and tg.auto_create_topics and tg.allowed_user_ids == []
    assert "1:abc" not in repr(tg)
    assert not parse_config("", source="x", env={}).telegram.enabled


def test_telegram_config_errors_say_what_to_fix() -> None:
    with pytest.raises(ConfigError, match="webhook_secret"):
        parse_config("telegram:\n  token: t\n  mode: webhook\n", source="x", env={})
    with pytest.raises(ConfigError, match="General"):
        parse_config("telegram:\n  topics: {general: 5}\n", source="x", env={})
    with pytest.raises(ConfigError, match=r"telegram\.topics.*not a topic"):
        parse_config("telegram:\n  topics: {finance: 1}\n", source="x", env={})
    with pytest.raises(ConfigError, match=r"telegram\.mode"):
        parse_config("telegram:\n  mode: carrier-pigeon\n", source="x", env={})
    config = parse_config("telegram:\n  api_base_url: http://localhost:8081/\n", source="x", env={})
    assert config.telegram.api_base_url == "http://localhost:8081/bot"
