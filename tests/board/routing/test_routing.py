"""Who answers, in which session: @role, /ask, 'role:', topics, owners and others."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.app import Board
from board.conversation.sessions import role_of_key, session_key
from board.envelope import Envelope
from board.routing.router import Router
from tests.support.fakes.scripted_model import ScriptedModel, say
from tests.support.llm import scripted_board

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
        ("@sabha_bot hi", "general", "main", "@sabha_bot hi"),  # Telegram addressing the bot itself
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
    assert bad.error == "There is no role 'nobody'. Roles: general, research, content, finance, strategy, critic."
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
    assert await board.parts.sessions.current("board:general:g--1") is None  # nothing reached a model or transcript
    after = await board.handle(env("short again"))
    assert after.kind == "answer"


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("run a board meeting on our pricing", "our pricing"),
        ("Convene the board about expanding to Europe.", "expanding to Europe"),
        ("please hold a meeting to discuss hiring a CFO?", "hiring a CFO"),
        ("Let's call a board meeting about the Series A", "the Series A"),
    ],
)
def test_plain_words_ask_for_a_meeting(text: str, topic: str) -> None:
    route = Router(ROLES, NAMES).route(env(text))
    assert (route.kind, route.command, route.role, route.text) == ("meeting", "meeting", "general", topic)


@pytest.mark.parametrize("text", ["We should run a tight ship", "the board meeting went well", "run a board meeting"])
def test_words_that_only_mention_meetings_stay_a_chat(text: str) -> None:
    assert Router(ROLES, NAMES).route(env(text)).kind == "chat"


def test_several_mentions_answer_in_order_and_an_unknown_name_is_refused() -> None:
    router = Router(ROLES, NAMES)
    route = router.route(env("@finance @critic is this safe?"))
    assert (route.role, route.also, route.text) == ("finance", ("critic",), "is this safe?")
    inline = router.route(env("what do @strategy and @finance think, and @strategy again?"))
    assert (inline.role, inline.also) == ("strategy", ("finance",))
    assert inline.text == "what do @strategy and @finance think, and @strategy again?"
    unknown = router.route(env("@nobody hi"))
    assert unknown.error == "There is no role 'nobody'. Roles: general, research, content, finance, strategy, critic."
    alone = router.route(env("@critic"))  # a role and no question: like /ask critic
    assert (alone.kind, alone.role) == ("command", "critic")
    assert alone.error == router.route(env("/ask critic")).error.replace("/ask critic", "@critic")


async def test_board_answers_each_mentioned_role_and_convenes_on_plain_words(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=lambda request: say(f"{request.persona.role} says hi"))
    board = await scripted_board(workspace, data_dir, model)
    try:
        reply = await board.handle(env("@finance @critic is this safe?"))
        assert reply.role == "finance"
        assert reply.text == "finance says hi\n\n🦉 Critic: critic says hi"
        assert [r.role for r in model.requests] == ["finance", "critic"]
        assert (await board.handle(env("@nobody hi"))).text.startswith("There is no role 'nobody'. Roles: general")
        started = await board.handle(env("run a board meeting on our pricing"))
        assert started.kind == "command" and "Convening the board on \u201cour pricing\u201d" in started.text
        assert not model.requests_for("general", purpose="turn")  # the chair's model was not asked to decide
        await board.parts.room.cancel(board.parts.room.running()[0])
    finally:
        await board.close()
