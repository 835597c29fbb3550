"""A meeting held in a group uses the group's memory scope whoever convened it (review finding 6): a
``/revisit`` sent from the owner's direct chat for a meeting held in the Telegram forum convenes the
follow-up meeting in the forum, and the owner's direct-chat facts never reach that meeting's prompts (the
forum's members read its statements). Through a real ``sabha run`` on the fake Bot API, the echo model
recording every prompt, facts extracted by the offline model's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.memory.facts import REMEMBER_TOOL
from board.room.meeting import MeetingSettings
from board.schedule import ScheduleRunner
from board.storage import StateURL
from tests.board.decisions.test_actions import answer
from tests.bot.channels.telegram.test_buttons_telegram import decided, said
from tests.support.board import board_with
from tests.support.daemon import SabhaProcess, answered, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.scripted_model import ScriptedModel, Step, call
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.knowledge import rows
from tests.support.schedule import RecordingDeliver
from tests.support.telegram import OWNER, eventually


async def test_a_revisit_sent_from_the_direct_chat_keeps_the_forum_meeting_in_the_forums_scope(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    async with EchoModel(latency=0.01) as model:
        config = write_config(tmp_path, fake, model)
        text = config.read_text(encoding="utf-8").replace("llm:\n", "llm:\n  cheap_model: offline\n", 1)
        config.write_text(text, encoding="utf-8")  # facts are extracted by the offline model's rules
        sabha = SabhaProcess(config)
        try:
            await sabha.start()
            fake.push_text(OWNER, OWNER, "Hi, I'm based in Pune. Please call me Asha.")
            await sabha.wait_for_log(r"memory: heard 'name'", timeout=60)
            _decision, meeting_id = await decided(fake, "Should we open a Berlin office?")
            before = len(model.bodies)
            fake.push_text(OWNER, OWNER, f"/revisit {meeting_id} the budget was cut by half")
            await said(fake, "sent back for a revisit", timeout=60)
            await sabha.wait_for_log(r"follow-up meeting m-\S+ convened", timeout=60)
            await said(fake, "Board decision", count=2, timeout=120)  # the follow-up decided, in the forum
            follow_up = [json.dumps(b) for b in model.bodies[before:]]
            fake.push_text(OWNER, OWNER, "Q803 and what about hiring?")  # marker: the direct chat still knows
            await eventually(lambda: answered(fake)["Q803"], "the marker's answer", timeout=60)
            direct = next(json.dumps(b) for b in model.bodies if "Q803" in json.dumps(b.get("messages", [])[-1:]))
        finally:
            await sabha.close()
    assert follow_up, "the follow-up meeting asked the model nothing"
    assert any("the budget was cut by half" in b for b in follow_up)
    leaked = [b for b in follow_up if "Pune" in b or "Asha" in b]
    assert not leaked, f"{len(leaked)} of the forum follow-up's {len(follow_up)} prompts carry the direct chat's facts"
    assert '- location: \\"Pune\\"' in direct  # the direct chat still recalls them


#: The forum where the first meeting ran, and the owner's direct chat the revisit is sent from.
IN_FORUM = dict(channel="telegram", sender="1", sender_name="Olive", chat_id="-100123", is_group=True, is_owner=True)
IN_DM = dict(channel="telegram", sender="1", sender_name="Olive", chat_id="1", is_owner=True)
REASON = "the budget was cut by half"


def saves_in_the_follow_up(request: LLMRequest) -> Step:
    """The meeting's answers (:func:`tests.board.decisions.test_actions.answer`); in the follow-up meeting,
    finance's turn first saves a fact with the ``remember`` tool (as an advisor may)."""
    texts = " ".join(str(m.content) for m in request.messages)
    names = {t.name for t in request.tools or ()}
    if request.persona.role == "finance" and REMEMBER_TOOL in names and REASON in texts and \
            not any(m.role == "tool" for m in request.messages):
        return call(REMEMBER_TOOL, {"key": "offsite budget", "value": "halved"})
    return answer(request)


@pytest.mark.backends
async def test_a_fact_saved_in_a_forum_follow_up_convened_from_the_direct_chat_stays_in_the_forum(
        workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    model = ScriptedModel(default=saves_in_the_follow_up)
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1),
                             state=state_url)
    try:
        assert "Convening the board" in (await board.handle(Envelope(text="/meeting Offsite in Goa?", **IN_FORUM))).text
        await board.parts.room.drain(20)
        [first] = [m.id for m in await board.parts.room.store.list(50)]
        reply = await board.handle(Envelope(text=f"/revisit {first} {REASON}", **IN_DM))
        assert "sent back for a revisit" in reply.text
        assert await ScheduleRunner(board.parts.schedule, RecordingDeliver()).run_due() == 1
        await board.parts.room.drain(20)
        kept = [dict(r) for r in await rows(board, "SELECT key, scope FROM memory_facts")]
    finally:
        await board.close()
    assert kept == [{"key": "offsite budget", "scope": "group:telegram:-100123"}], kept
