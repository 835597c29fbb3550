"""Streamed answers on Slack through a real ``sabha run``: one message in the thread, edited by ``chat.update`` while
the model writes, no faster than ``slack.stream_edit_interval_s``; a 429 on chat.update is waited out as Slack's
``Retry-After`` asks (the fake saw the wait), and the final text lands over the draft (one answer, not two)."""

from __future__ import annotations

import itertools
from pathlib import Path

from tests.support.slack import BOARD, OWNER, SlowStreamModel, running_slack, say
from tests.support.telegram import eventually

RETRY_AFTER = 2.0


async def test_an_answer_streams_by_edits_and_a_429_on_chat_update_is_honoured(tmp_path: Path) -> None:
    async with SlowStreamModel(words=14, word_delay=0.3) as model, \
            running_slack(tmp_path, model, stream=True) as (_, slack, poster):
        slack.rate_limit("chat.update", times=1, retry_after=RETRY_AFTER)
        post = await say(poster, BOARD, OWNER, "Q100 tell me slowly")
        ts = post["event"]["ts"]

        def answer_done() -> bool:
            return any("word13" in m.text and not m.text.endswith(" …") for m in slack.messages)

        await eventually(answer_done, "the whole answer edited in")
        mine = [m for m in slack.messages if m.thread_ts == ts]
        assert len(mine) == 1, f"one message in the thread, edited (not a second answer): {[m.text for m in mine]}"
        [draft] = mine
        assert draft.text.startswith("*"), f"headed by the advisor's name: {draft.text}"
        assert "ECHO" in draft.text and "word13" in draft.text and not draft.text.endswith(" …")
        assert len(draft.versions) >= 3, f"shown while written: {draft.versions}"
        assert any(v.endswith(" …") for v in draft.versions[:-1]), "the drafts carried the cursor"
        updates = [c for c in slack.calls_of("chat.update") if c.args.get("ts") == draft.ts]
        limited = [c for c in updates if c.status == 429]
        assert len(limited) == 1
        after = [c for c in updates if c.at > limited[0].at]
        assert after and after[0].at - limited[0].at >= RETRY_AFTER * 0.95, "the edit waited as Retry-After asked"
        done = [c for c in updates if c.status == 200]
        gaps = [b.at - a.at for a, b in itertools.pairwise(done)]
        assert gaps and min(gaps) >= 0.8, f"edits at least the interval apart (1 s): {gaps}"


async def test_killed_while_streaming_the_restart_edits_the_same_message_into_the_answer(tmp_path: Path) -> None:
    import signal
    import sqlite3

    from tests.support.daemon import SabhaProcess
    from tests.support.fakes.slack_api import FakeSlackAPI
    from tests.support.slack import NAMES, slack_env, write_slack_config

    def draft_recorded() -> bool:
        with sqlite3.connect(f"file:{tmp_path / 'sessions' / 'sabha.db'}?mode=ro", uri=True, timeout=10) as db:
            return db.execute("SELECT COUNT(*) FROM slack_drafts WHERE ts IS NOT NULL").fetchone()[0] == 1

    async with SlowStreamModel(words=30, word_delay=0.3) as model, FakeSlackAPI(users=NAMES) as slack:
        sabha = SabhaProcess(write_slack_config(tmp_path, slack, model, stream=True), env=slack_env())
        try:
            await sabha.start()
            from tests.support.slack import slack_poster

            async with slack_poster(sabha) as poster:
                post = await say(poster, BOARD, OWNER, "Q110 a long one")
            ts = post["event"]["ts"]
            await eventually(lambda: any(m.thread_ts == ts and len(m.versions) >= 2 for m in slack.messages),
                             "the draft posted and edited")
            await eventually(draft_recorded, "the draft's ts recorded")
            await sabha.signal(signal.SIGKILL)
            await sabha.start()
            await eventually(lambda: any("word29" in m.text and not m.text.endswith(" …") for m in slack.messages),
                             "the whole answer after the restart")
        finally:
            await sabha.close()
    mine = [m for m in slack.messages if m.thread_ts == ts]
    assert len(mine) == 1, f"the restart edited the same message, not a second answer: {[m.text for m in mine]}"
    assert model.calls == 2, "the turn ran again after the kill"


async def test_a_slow_answer_s_working_notice_becomes_the_answer(tmp_path: Path) -> None:
    from tests.support.fakes.echo_model import EchoModel

    async with EchoModel(latency=10.0) as model, running_slack(tmp_path, model) as (sabha, slack, poster):
        post = await say(poster, BOARD, OWNER, "Q120 take your time")
        ts = post["event"]["ts"]
        await eventually(lambda: any("working on it" in m.text for m in slack.messages), "the working notice")
        await eventually(lambda: any("Q120" in m.text for m in slack.messages), "the answer")
        [message] = [m for m in slack.messages if m.thread_ts == ts]
        assert "working on it" in message.versions[0] and "ECHO" in message.text, message.versions
        assert any("told chat" in line and "working on message" in line for line in sabha.lines)
