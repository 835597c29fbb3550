"""Who answers, in which session: @role, /ask, 'role:', topics, owners and others."""

from __future__ import annotations

import pytest

from board.envelope import Envelope
from board.memory.sessions import role_of_key, session_key
from board.router import Router
from board.service import Board

ROLES = ["general", "research", "content", "finance", "strategy", "critic"]
NAMES = {r: r.capitalize() for r in ROLES}


def env(text: str, **kw: object) -> Envelope:
    kw.setdefault("is_owner", True)
    return Envelope(channel=kw.pop("channel", "console"), text=text, sender=kw.pop("sender", "owner"), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "role", "key", "rest"),
    [
        ("hello", "general", "main", "hello"),
        ("@finance what is our runway?", "finance", "board:finance", "what is our runway?"),
        ("@Finance, runway?", "finance", "board:finance", "runway?"),
        ("/ask critic poke holes", "critic", "board:critic", "poke holes"),
        ("/ask@SabhaBot critic poke holes", "critic", "board:critic", "poke holes"),
        ("strategy: where are we in a year?", "strategy", "board:strategy", "where are we in a year?"),
        ("Research, any data?", "research", "board:research", "any data?"),
        ("@nobody hi", "general", "main", "@nobody hi"),
        ("Strategy is hard", "general", "main", "Strategy is hard"),
    ],
)
def test_owner_addressing(text: str, role: str, key: str, rest: str) -> None:
    route = Router(ROLES, NAMES).route(env(text))
    assert (route.kind, route.role, route.session_key, route.text) == ("chat", role, key, rest)


def test_topic_role_hint_and_group_keys() -> None:
    router = Router(ROLES, NAMES)
    route = router.route(env("numbers please", is_group=True, chat_id="-100123", thread_id=7, role_hint="finance"))
    assert (route.role, route.session_key) == ("finance", "board:finance:g--100123")
    general = router.route(env("hi all", is_group=True, chat_id="-100123"))
    assert (general.role, general.session_key) == ("general", "board:general:g--100123")
    explicit = router.route(env("@critic thoughts?", is_group=True, chat_id="-100123", role_hint="finance"))
    assert explicit.role == "critic"


def test_other_users_and_whatsapp_get_their_own_sessions() -> None:
    router = Router(ROLES, NAMES)
    tg = router.route(env("@finance hi", channel="telegram", sender="42", is_owner=False, chat_id="42"))
    assert tg.session_key == "board:finance:tg-42"
    wa = router.route(env("hi", channel="whatsapp", sender="+4915112345", is_owner=False))
    assert wa.session_key == "board:general:wa-+4915112345"


def test_commands_and_errors() -> None:
    router = Router(ROLES, NAMES)
    assert router.route(env("/roles")).kind == "command"
    assert router.route(env("/meeting expand to Europe")).kind == "meeting"
    bad = router.route(env("/ask nobody hi"))
    assert bad.error and "no role 'nobody'" in bad.error and "finance" in bad.error
    empty = router.route(env("/ask finance"))
    assert empty.error and "needs a question" in empty.error


def test_session_key_helpers() -> None:
    assert session_key("general", is_owner=True) == "main"
    assert role_of_key("board:critic:g-5") == "critic"
    assert role_of_key("main") == "general"
    with pytest.raises(ValueError):
        role_of_key("whatever")


async def test_board_replies_carry_the_place(board: Board) -> None:
    reply = await board.handle(
        Envelope(channel="telegram", text="@critic risks?", sender="1", chat_id="-100", thread_id=9,
                 message_id="55", is_group=True)
    )
    assert (reply.role, reply.chat_id, reply.thread_id, reply.reply_to) == ("critic", "-100", 9, "55")
    assert reply.session_key == "board:critic:g--100"


async def test_unknown_command_and_help(board: Board) -> None:
    unknown = await board.handle(env("/frobnicate"))
    assert unknown.kind == "error" and "/help" in unknown.text
    help_reply = await board.handle(env("/help"))
    assert "@<role>" in help_reply.text and "/reset" in help_reply.text
    roles = await board.handle(env("/roles"))
    assert "💰 Finance (@finance, CFO)" in roles.text
    assert roles.text.startswith("The board:\n")  # not "The board board:"


async def test_oversized_message_gets_a_clear_reply_and_no_model_call(board: Board) -> None:
    huge = "x" * (board.settings.max_message_chars + 1)
    reply = await board.handle(env(huge, channel="telegram", sender="7", chat_id="-1", thread_id=3, is_group=True))
    assert reply.kind == "error" and "characters long; the limit is 20,000" in reply.text
    assert reply.thread_id == 3
    assert await board.sessions.current("board:general:g--1") is None  # nothing reached a model or transcript
    after = await board.handle(env("short again"))
    assert after.kind == "answer"
