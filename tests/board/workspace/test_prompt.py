"""Prompt assembly: fixed order, byte-stable static block, per-turn context after the conversation,
template hot reload."""

from __future__ import annotations

from pathlib import Path

from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.llm.base import LLMRequest, LLMResponse
from board.llm.offline import OfflineProvider
from board.llm.registry import ProviderRegistry


class RecordingOffline(OfflineProvider):
    """The offline model, remembering every request it was sent."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return await super().complete(request)


async def open_recording(settings: BoardSettings) -> tuple[Board, RecordingOffline]:
    model = RecordingOffline()
    registry = ProviderRegistry()
    registry.register("offline", lambda: model)
    return await Board.open(settings, registry), model


def ask(text: str, sender: str = "owner") -> Envelope:
    return Envelope(channel="console", text=text, sender=sender, is_owner=True)


async def test_static_prefix_identical_across_turns_and_changes_after_soul_edit(
    settings: BoardSettings, workspace: Path
) -> None:
    board, model = await open_recording(settings)
    try:
        await board.handle(ask("@finance one"))
        await board.handle(ask("@finance two", sender="someone-else-same-owner"))
        first, second = model.requests
        assert [b.name for b in first.system] == ["static"] and first.system[0].cacheable
        assert first.messages[-1].context.startswith("<turn_context>")  # the per-turn block follows the message
        assert first.system[0].text.encode() == second.system[0].text.encode()
        soul = workspace / "board" / "finance.soul.md"
        soul.write_text(soul.read_text(encoding="utf-8") + "\nAlways quote a number.\n", encoding="utf-8")
        await board.handle(ask("@finance three"))
        third = model.requests[-1]
        assert third.system[0].text != first.system[0].text
        assert "Always quote a number." in third.system[0].text
    finally:
        await board.close()


async def test_prompt_order_and_contents(settings: BoardSettings, workspace: Path) -> None:
    (workspace / "USER.md").write_text("The Director runs a bakery in Pune.\n", encoding="utf-8")
    board, model = await open_recording(settings)
    try:
        await board.handle(ask("@critic first"))
        await board.handle(ask("@critic second"))
        req = model.requests[-1]
        static, dynamic = req.system[0].text, req.messages[-1].context
        agents_md = (workspace / "AGENTS.md").read_text(encoding="utf-8").strip().splitlines()[0]
        soul_line = "You are the board's pre-mortem"
        positions = [static.index("# Base directives"), static.index(agents_md), static.index("bakery in Pune"),
                     static.index(soul_line), static.index("# The board")]
        assert positions == sorted(positions)  # USER.md is stable: it sits in the cached static block
        assert "💰 Finance (`finance`)" in static and "(`critic`)" not in static  # colleagues, not self
        assert dynamic.startswith("<turn_context>\n") and dynamic.endswith("\n</turn_context>")
        assert "Channel: console" in dynamic and "Time:" in dynamic and "bakery" not in dynamic
        assert "Time:" not in static and "Channel:" not in static
        assert [(m.role, m.content) for m in req.messages][-1] == ("user", "second")  # the user's own text
        assert [m.role for m in req.messages] == ["user", "assistant", "user"]
        # breakpoints: where the previous turn wrote (its message) and where this one ends; only the
        # newest message carries a per-turn block
        assert [m.cache_point for m in req.messages] == [True, False, True]
        assert [bool(m.context) for m in req.messages] == [False, False, True]
    finally:
        await board.close()


async def test_broken_template_falls_back_to_shipped(settings: BoardSettings, workspace: Path) -> None:
    board, model = await open_recording(settings)
    try:
        (workspace / "templates" / "dynamic.md.j2").write_text("{% if %}broken", encoding="utf-8")
        reply = await board.handle(ask("hi"))
        assert reply.kind == "answer"
        assert "# This conversation" in model.requests[-1].context_text
        (workspace / "templates" / "dynamic.md.j2").write_text("CUSTOM {{ channel }}\n", encoding="utf-8")
        await board.handle(ask("hi again"))
        assert model.requests[-1].context_text == "<turn_context>\nCUSTOM console\n</turn_context>"
    finally:
        await board.close()


async def test_group_history_says_who_said_what(settings: BoardSettings) -> None:
    board, model = await open_recording(settings)
    place = dict(channel="telegram", chat_id="-100", thread_id=7, is_group=True, role_hint="finance")
    try:
        await board.handle(Envelope(text="We have 9 months of cash", sender="1", sender_name="Asha", **place))
        await board.handle(Envelope(text="No, 6 after the hire", sender="2", sender_name="Ravi", **place))
        messages = model.requests[-1].messages
        assert [(m.role, m.content) for m in messages if m.role == "user"] == [
            ("user", '"Asha": We have 9 months of cash'), ("user", '"Ravi": No, 6 after the hire')]  # names quoted
        await board.handle(ask("@finance just me"))
        assert model.requests[-1].messages[-1].content == "just me"  # a direct chat is not prefixed
    finally:
        await board.close()
