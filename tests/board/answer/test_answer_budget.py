"""The budget at the front door (board/answer): it is asked once before a message's files are read (reading
may be paid for), and once more after a read that was paid for (a transcription), so a voice note whose
transcription passes a sender's daily limit gets the limit's line, not a chat answer on top (as before the
front door was one call: issue 37's review found the second question missing)."""

from __future__ import annotations

from pathlib import Path

from board.spending.budget import SENDER_REACHED
from tests.support.fakes.openai_api import FakeOpenAI, fake_ogg_opus
from tests.support.voice import rig

QUESTION = "should we raise prices?"


async def test_a_voice_note_whose_transcription_passes_the_senders_limit_gets_the_limits_line(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    long_note = fake_ogg_opus(120.0, b"a long one")
    fake_openai.script_transcript(long_note, QUESTION, seconds=120.0)  # whisper-1: a 2 min note costs $0.012
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1",
                   extra_yaml="budget: {per_sender_daily_usd: 0.005}") as r:
        reply = await r.ask("", note=long_note, sender="friend")
        assert fake_openai.transcriptions, "the note was not transcribed: the limit was reached before, not by it"
        assert reply.kind == "error" and reply.text == SENDER_REACHED
        assert not fake_openai.requests, "a chat answer was paid for past the sender's limit"


async def test_a_voice_note_within_the_limit_is_answered(tmp_path: Path, workspace: Path,
                                                         fake_openai: FakeOpenAI) -> None:
    note = fake_ogg_opus(7.0, b"question one")
    fake_openai.script_transcript(note, QUESTION, seconds=7.0)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1",
                   extra_yaml="budget: {per_sender_daily_usd: 5.0}") as r:
        reply = await r.ask("", note=note, sender="friend")
        assert reply.kind == "answer" and QUESTION in r.chat_prompts()[-1]


async def test_the_owners_budget_note_rides_on_a_meetings_off_reply(workspace: Path, data_dir: Path) -> None:
    """The owner's note (a sender reached their limit) comes with the owner's next reply, also when that reply
    says meetings are off (a refusal of the admission's gate), as it did before the front door."""
    from board.agent.runner import AgentSettings
    from board.app import Board, BoardSettings
    from board.envelope import Envelope
    from board.llm.base import Usage
    from board.llm.pricing import ModelPrice, PriceTable
    from board.roles import RosterSpec
    from board.room.settings import MEETINGS_OFF, MeetingSettings
    from board.spending.budget import BudgetSettings
    from bot.app import all_migrations
    from tests.support.fakes.scripted_model import ScriptedModel, Step
    from tests.support.llm import FAST_RETRY

    model = ScriptedModel(default=lambda request: Step(text="an answer", usage=Usage(input_tokens=1000,
                                                                                       output_tokens=0)))
    prices = PriceTable.with_overrides({"scripted:main": ModelPrice(input=1000, output=0)})  # $1 a call
    settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(), meetings=MeetingSettings(enabled=False),
        agent=AgentSettings(default_model="scripted:main", retry=FAST_RETRY, prices=prices, max_tool_iterations=0),
        budget=BudgetSettings(per_sender_daily_usd=0.5))
    board = await Board.open(settings, model.registry(), migrations=all_migrations())
    try:
        def msg(sender: str, text: str, n: int) -> Envelope:
            return Envelope(channel="telegram", text=text, sender=sender, chat_id=sender, message_id=str(n),
                            is_owner=sender == "42")

        assert (await board.handle(msg("43", "what do you think?", 1))).text == "an answer"
        assert (await board.handle(msg("43", "and now?", 2))).kind == "error"  # 43 reached the limit
        refused = await board.handle(msg("42", "/meeting Should we open a Pune office?", 3))
        assert refused.text.startswith(MEETINGS_OFF)
        assert "1 sender(s) reached budget.per_sender_daily_usd ($0.50) today (telegram:43)" in refused.text
    finally:
        await board.close()
