"""Slack on a real ``sabha run``: the fake Slack posts signed events the way Slack does (retrying what is not
acknowledged), slack_sdk's client in the daemon answers through the fake Web API, the echo model answers.

Where answers land (the thread they answer, an advisor's channel, a DM), who is answered (the signature and its
timestamp window, strangers), and a redelivery answered once."""

from __future__ import annotations

import re
import time
from pathlib import Path

from aiohttp import ClientSession

from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import BOT_ID, BOT_USER, FakeSlackAPI, event_callback, message_event
from tests.support.slack import (
    BOARD,
    FINANCE,
    FRIEND,
    OWNER,
    OWNER_DM,
    STRANGER,
    next_ts,
    running_slack,
    say,
    slack_poster,
)
from tests.support.telegram import eventually


def in_thread(slack: FakeSlackAPI, channel: str, thread_ts: str | None, containing: str) -> list[str]:
    return [m.text for m in slack.messages if m.channel == channel and m.thread_ts == thread_ts
            and containing in m.text]


def system_prompt(model: EchoModel, question: str) -> str:
    for body in model.bodies:
        messages = body.get("messages") or []
        if any(question in str(m.get("content")) for m in messages if m.get("role") == "user"):
            return "\n".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    raise AssertionError(f"the model was not asked {question!r}")


async def test_an_advisor_addressed_by_name_in_the_board_channel_answers_in_that_thread_in_its_voice(
        tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, poster):
        first = await say(poster, BOARD, OWNER, "@finance Q001 what is our runway?")
        ts = first["event"]["ts"]
        await eventually(lambda: in_thread(slack, BOARD, ts, "Q001"), "finance's answer in the thread")
        [answer] = in_thread(slack, BOARD, ts, "Q001")
        assert answer.startswith("*💰 Finance*\n"), answer
        assert "the CFO" in system_prompt(echo_model, "Q001"), "Finance's soul wrote it"
        # A follow-up in the thread, addressing nobody: the thread is finance's, and its own session.
        await say(poster, BOARD, FRIEND, "Q002 and after the raise?", thread_ts=ts)
        await eventually(lambda: in_thread(slack, BOARD, ts, "Q002"), "the follow-up's answer in the thread")
        assert in_thread(slack, BOARD, ts, "Q002")[0].startswith("*💰 Finance*")
        key = f"board:finance:g-{BOARD}_{ts}"
        turns = [line for line in sabha.lines if "sabha.agent: turn channel=slack" in line]
        assert len(turns) == 2 and all(f"key={key} " in line for line in turns), turns
        # Plain words in a new thread: the chair answers there.
        other = await say(poster, BOARD, OWNER, "Q003 where do we stand?")
        ots = other["event"]["ts"]
        await eventually(lambda: in_thread(slack, BOARD, ots, "Q003"), "the chair's answer")
        assert not in_thread(slack, BOARD, ots, "Q003")[0].startswith("*💰 Finance*")
        assert all(m.thread_ts is not None for m in slack.messages), "every answer went into a thread"


async def test_a_channel_per_advisor_and_a_dm_with_the_app(tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, poster):
        post = await say(poster, FINANCE, FRIEND, "Q010 margins this quarter?")
        ts = post["event"]["ts"]
        await eventually(lambda: in_thread(slack, FINANCE, ts, "Q010"), "the answer in finance's channel")
        assert in_thread(slack, FINANCE, ts, "Q010")[0].startswith("*💰 Finance*")
        await say(poster, OWNER_DM, OWNER, "Q011 a private word", channel_type="im")
        await eventually(lambda: in_thread(slack, OWNER_DM, None, "Q011"), "the answer in the DM")
        await eventually(lambda: any("key=main " in line for line in sabha.lines), "the owner's DM turn")
        # Somewhere the board does not sit: ignored, logged once.
        await say(poster, "C0RANDOM", OWNER, "Q012 anyone?")
        await say(poster, "C0RANDOM", OWNER, "Q013 anyone?")
        await say(poster, OWNER_DM, OWNER, "Q014 marker", channel_type="im")
        await eventually(lambda: in_thread(slack, OWNER_DM, None, "Q014"), "the marker's answer")
        assert not [t for t in slack.texts() if "Q012" in t or "Q013" in t]
        assert sum("channel C0RANDOM" in line for line in sabha.lines) == 1


async def test_a_bad_signature_or_a_stale_timestamp_is_refused_with_401_and_costs_nothing(
        tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, poster):
        forged = event_callback(message_event(BOARD, OWNER, "Q020 forged", next_ts()))
        assert (await poster.post(forged, secret="not-the-signing-secret"))[0] == 401
        replayed = event_callback(message_event(BOARD, OWNER, "Q021 replayed", next_ts()))
        old = int(time.time()) - 6 * 60
        assert (await poster.post(replayed, timestamp=old))[0] == 401
        assert poster.http is not None
        async with poster.http.post(poster.url, data=b"{}") as unsigned:
            assert unsigned.status == 401
        status, body = await poster.post({"token": "t", "challenge": "abc123", "type": "url_verification"})
        assert (status, body) == (200, '{"challenge": "abc123"}')
        await say(poster, BOARD, OWNER, "Q022 a real one")
        await eventually(lambda: any("Q022" in t for t in slack.texts()), "the signed one's answer")
        assert echo_model.questions and not [q for q in echo_model.questions if "Q020" in q or "Q021" in q]
        assert echo_model.calls == 1
        refusals = [line for line in sabha.lines if "refused a request" in line]
        assert len(refusals) == 3 and "stale" in refusals[1] and "wrong" in refusals[0], refusals
        assert not [line for line in sabha.lines if "not-the-signing-secret" in line]


async def test_a_slack_retry_and_the_app_mention_twin_are_answered_once(tmp_path: Path,
                                                                       echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, poster):
        ts = next_ts()
        event = message_event(BOARD, OWNER, f"<@{BOT_USER}> Q030 once please", ts)
        body = event_callback(event)
        assert (await poster.post(body))[0] == 200
        assert (await poster.post(body, retry=1))[0] == 200, "Slack's retry (X-Slack-Retry-Num: 1) acknowledged"
        mention = event_callback({k: v for k, v in event.items() if k != "channel_type"} | {"type": "app_mention"})
        assert (await poster.post(mention))[0] == 200
        await eventually(lambda: any("Q030" in t for t in slack.texts()), "the answer")
        await say(poster, BOARD, OWNER, "Q031 marker", thread_ts=ts)  # same conversation: after the others
        await eventually(lambda: any("Q031" in t for t in slack.texts()), "the marker's answer")
        assert sum("Q030" in t for t in slack.texts()) == 1
        assert [q for q in echo_model.questions if "Q030" in q] != [] and echo_model.calls == 2
        assert any("Slack's retry 1" in line for line in sabha.lines)
        # The app's own posts and edits (its streamed answers) come back as events: ignored.
        own = event_callback(message_event(BOARD, BOT_USER, "ECHO Q030 once please", next_ts(), bot_id=BOT_ID))
        assert (await poster.post(own))[0] == 200
        await say(poster, BOARD, OWNER, "Q032 marker", thread_ts=ts)
        await eventually(lambda: any("Q032" in t for t in slack.texts()), "the second marker's answer")
        assert echo_model.calls == 3


async def test_a_stranger_costs_no_model_call_and_hears_one_polite_line(tmp_path: Path,
                                                                       echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, poster):
        first = await say(poster, BOARD, STRANGER, "Q040 let me in")
        await say(poster, BOARD, STRANGER, "Q041 please", thread_ts=first["event"]["ts"])
        await say(poster, BOARD, OWNER, "Q042 marker")
        await eventually(lambda: any("Q042" in t for t in slack.texts()), "the owner's answer")
        await eventually(lambda: any("only talks with" in t for t in slack.texts()), "the polite line")
        assert sum("only talks with" in t for t in slack.texts()) == 1
        assert not [q for q in echo_model.questions if "Q040" in q or "Q041" in q]
        assert sum(STRANGER in line and "not in slack.allowed_user_ids" in line for line in sabha.lines) == 1


async def test_an_edit_gets_one_line_and_never_a_second_answer(tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, poster):
        post = await say(poster, BOARD, OWNER, "Q050 first words")
        ts = post["event"]["ts"]
        await eventually(lambda: in_thread(slack, BOARD, ts, "Q050"), "the answer")
        edited = {"type": "message", "subtype": "message_changed", "channel": BOARD, "channel_type": "channel",
                  "hidden": True, "ts": next_ts(), "event_ts": next_ts(),
                  "message": {"type": "message", "user": OWNER, "text": "Q051 changed words", "ts": ts,
                              "edited": {"user": OWNER, "ts": next_ts()}},
                  "previous_message": {"type": "message", "user": OWNER, "text": "Q050 first words", "ts": ts}}
        assert (await poster.post(event_callback(edited)))[0] == 200
        assert (await poster.post(event_callback({**edited, "message": {**edited["message"],
                                                                        "text": "Q052 again"}})))[0] == 200
        await eventually(lambda: in_thread(slack, BOARD, ts, "I don't read edits"), "the edit line")
        deleted = {"type": "message", "subtype": "message_deleted", "channel": BOARD, "hidden": True,
                   "deleted_ts": ts, "ts": next_ts(), "previous_message": {"user": OWNER, "ts": ts, "text": "x"}}
        assert (await poster.post(event_callback(deleted)))[0] == 200
        await say(poster, BOARD, OWNER, "Q053 marker", thread_ts=ts)
        await eventually(lambda: in_thread(slack, BOARD, ts, "Q053"), "the marker")
        assert len(in_thread(slack, BOARD, ts, "I don't read edits")) == 1
        assert not [q for q in echo_model.questions if "Q051" in q or "Q052" in q]
        assert any(re.search(r"post C0BOARD/\S+ was deleted", line) for line in sabha.lines)


async def test_readiness_says_when_slack_s_api_is_unreachable_and_recovers(tmp_path: Path,
                                                                         echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model) as (sabha, slack, _), ClientSession() as http:
        url = f"http://127.0.0.1:{sabha.port}/readyz"
        async with http.get(url) as ready:
            assert ready.status == 200
        await slack.stop()
        post = event_callback(message_event(BOARD, OWNER, "Q060 while Slack is away", next_ts()))
        async with slack_poster(sabha) as poster:
            assert (await poster.post(post))[0] == 200, "stored and acknowledged while Slack's API is away"
        await sabha.wait_for_log(r"slack: cannot reach Slack's Web API")

        async def readiness() -> tuple[int, str]:
            async with http.get(url) as response:
                return response.status, await response.text()

        status, text = await readiness()
        assert status == 503 and "slack" in text, text
        await slack.restart()
        await sabha.wait_for_log(r"answers again")
        await eventually(lambda: any("Q060" in t for t in slack.texts()), "the answer once Slack is back")
        assert (await readiness())[0] == 200
        assert sum("cannot reach Slack's Web API" in line for line in sabha.lines) == 1


async def test_owner_only_commands_are_the_owner_s_and_public_mode_holds_strangers_to_the_rate(
        tmp_path: Path, echo_model: EchoModel) -> None:
    extra = ("  public_rate_per_minute: 2",)
    async with running_slack(tmp_path, echo_model, access="public", slack_extra=extra) as (_, slack, poster):
        friend = await say(poster, BOARD, FRIEND, "/souls")
        owner = await say(poster, BOARD, OWNER, "/souls")
        await eventually(lambda: in_thread(slack, BOARD, friend["event"]["ts"], "owner only"), "the refusal")
        await eventually(lambda: in_thread(slack, BOARD, owner["event"]["ts"], "finance"), "the owner's /souls")
        # A stranger in public mode: two a minute, then one polite refusal, no model call.
        posts = [await say(poster, BOARD, STRANGER, f"Q07{i} hello from outside") for i in range(4)]
        await eventually(lambda: sum(bool(in_thread(slack, BOARD, p["event"]["ts"], "ECHO")) for p in posts) == 2,
                         "the stranger's two answers")
        await eventually(lambda: any("faster than I can answer" in t for t in slack.texts()), "the refusal")
        await say(poster, BOARD, OWNER, "Q079 marker")
        await eventually(lambda: any("Q079" in t for t in slack.texts()), "the marker")
        assert sum("faster than I can answer" in t for t in slack.texts()) == 1
        assert len([q for q in echo_model.questions if "hello from outside" in q]) == 2


async def test_public_mode_trips_the_daily_cap_on_spend_recorded_after_the_start(tmp_path: Path,
                                                                                 echo_model: EchoModel) -> None:
    """Review finding: Slack read what strangers spent today only at its start, so a cap reached afterwards never
    tripped here (the board still held each call to it) and one reached before the start held all day. It is read
    again as strangers' posts arrive (at most once a second)."""
    import sqlite3
    from datetime import UTC, datetime

    from bot.channels.public_limits import CAP_REACHED

    extra = ("  public_rate_per_minute: 600", "  public_daily_usd: 0.5")
    async with running_slack(tmp_path, echo_model, access="public", slack_extra=extra) as (_, slack, poster):
        first = await say(poster, BOARD, STRANGER, "Q081 under the cap")
        await eventually(lambda: in_thread(slack, BOARD, first["event"]["ts"], "ECHO"), "the answer under the cap")
        with sqlite3.connect(tmp_path / "sessions" / "sabha.db", timeout=30) as db:  # strangers' spend, recorded now
            db.execute("INSERT INTO llm_calls(ts, provider, model, outcome, cost_usd, scope) VALUES (?, ?, ?, ?, ?, ?)",
                       (datetime.now(UTC).isoformat(), "openai", "gpt", "ok", 0.6, "public:slack"))
        refused = None
        for i in range(2, 200):  # re-read at most once a second: until a post meets the cap
            post = await say(poster, BOARD, STRANGER, f"Q{80 + i:03d} still there?")
            ts = post["event"]["ts"]
            await eventually(lambda t=ts: in_thread(slack, BOARD, t, "ECHO") or in_thread(slack, BOARD, t, CAP_REACHED),
                             "an answer or the cap's line")
            if in_thread(slack, BOARD, ts, CAP_REACHED):
                refused = f"Q{80 + i:03d}"
                break
    assert refused is not None, "the cap never tripped"
    assert not [q for q in echo_model.questions if refused in q]
