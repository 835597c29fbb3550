"""Issue 26, answers that stream on Telegram (and not on WhatsApp): a real ``sabha run`` against the fake Bot API and a
fake OpenAI model that streams slowly (``llm.providers.openai.stream: true``, a delay between
chunks). The answer shows up while it is written, in one message edited in place at a bounded
rate, and ends as exactly that one message with the final formatted text; a kill -9 mid-stream
and a restart still leave one message with the whole answer; a provider error halfway replaces
the partial text with a clear message."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from board.agent.exchange.outcome import DEGRADED_REPLY
from bot.channels.telegram.format import render
from bot.channels.telegram.stream import LOOKING
from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS
from tests.bot.channels.whatsapp.test_whatsapp_durability import write_config as write_whatsapp_config
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FRIEND, OWNER, eventually
from tests.support.whatsapp import APP_SECRET, post, text_notification

ANSWER = ("Pricing is a promise about value, so start from the outcome your customer buys, "
          "then test three price points with ten real conversations before you print a number anywhere.")
WORDS = len(ANSWER.split())


def streaming_config(root: Path, telegram: FakeTelegramAPI, model: FakeOpenAI, extra: list[str] | None = None) -> Path:
    """``write_config``'s daemon, its OpenAI provider streaming from ``model``."""
    path = write_config(root, telegram, model, extra=extra)  # type: ignore[arg-type]
    text = path.read_text(encoding="utf-8")
    line = f"      base_url: {model.base_url}\n"
    path.write_text(text.replace(line, line + "      stream: true\n"), encoding="utf-8")
    return path


def bot_texts(fake: FakeTelegramAPI, needle: str) -> list[str]:
    """The current texts of the bot's messages in the owner's chat that show ``needle``."""
    return [str(m.get("text")) for (chat, _), m in sorted(fake.messages.items(), key=lambda kv: kv[0][1])
            if chat == OWNER and needle in str(m.get("text") or "") and m.get("from", {}).get("id") == fake.bot_id]


def final_text(header: str, answer: str) -> str:
    """What a non-streamed delivery of ``answer`` shows: its first (only) formatted chunk."""
    return render(answer, header)[0].text


def edit_times(fake: FakeTelegramAPI, message_id: int) -> list[float]:
    return [t for (method, p), t in zip(fake.calls, fake.call_times, strict=True)
            if method == "editMessageText" and int(p.get("message_id", 0)) == message_id]


async def ask_and_mark(fake: FakeTelegramAPI, model: FakeOpenAI, question: str) -> None:
    """After ``question``'s answer, a marker: once the marker is answered nothing else is coming."""
    fake.push_text(OWNER, OWNER, "marker please")
    await fake.wait_until(lambda: bot_texts(fake, "MARKER DONE"), "the marker's answer", timeout=30)


async def test_a_streamed_answer_shows_while_written_and_ends_as_one_message(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.25)  # about 8 s of streaming
    fake_openai.script_text("MARKER DONE")
    sabha = SabhaProcess(streaming_config(tmp_path, fake, fake_openai))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "how do I price my product?")
        [first] = await fake.wait_for_messages(1, timeout=30)
        # The first thing the user sees comes while the model is still writing: part of the answer.
        assert "Pricing" in first.text and "print a number anywhere" not in first.text, first.text
        await ask_and_mark(fake, fake_openai, "how do I price my product?")
    finally:
        await sabha.close()
    header = first.text.split("\n", 1)[0]
    [shown] = bot_texts(fake, "Pricing is")  # exactly one message carries the answer
    assert shown == final_text(header, ANSWER)  # the final text equals the non-streamed answer
    answer_sends = [m for m in fake.sent_messages if "Pricing" in m.text]
    assert [m.message_id for m in answer_sends] == [first.message_id]
    edits = edit_times(fake, first.message_id)
    assert len(edits) >= 2, "the draft was edited as the text came, then into the final answer"
    sent_at = next(t for (method, _), t in zip(fake.calls, fake.call_times, strict=True) if method == "sendMessage")
    gaps = [b - a for a, b in itertools.pairwise([sent_at, *edits])]
    assert all(gap >= 0.95 for gap in gaps), gaps  # at most one request a second for the answer
    assert len(edits) <= WORDS // 2, f"{len(edits)} edits for {WORDS} chunks: not bounded"
    assert inbox_details(tmp_path)["how do I price my product?"] == "answered: edited over its draft"


async def test_kill_9_mid_stream_and_restart_leave_one_message_with_the_whole_answer(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.3)
    fake_openai.script_text(ANSWER, chunk_delay=0.05)  # the turn again, after the restart
    fake_openai.script_text("MARKER DONE")
    config = streaming_config(tmp_path, fake, fake_openai)
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "how do I price my product?")
        [draft] = await fake.wait_for_messages(1, timeout=30)
        await fake.wait_for_call("editMessageText", timeout=30)  # the draft grows...
        assert "print a number anywhere" not in str(fake.messages[(OWNER, draft.message_id)].get("text"))
        sabha.proc.kill()  # ... and Sabha dies mid-stream (kill -9)
        await sabha.wait()
        sabha = SabhaProcess(config)
        await sabha.start()
        await ask_and_mark(fake, fake_openai, "how do I price my product?")
    finally:
        await sabha.close()
    header = draft.text.split("\n", 1)[0]
    [shown] = bot_texts(fake, "Pricing is")
    assert shown == final_text(header, ANSWER)
    assert [m.message_id for m in fake.sent_messages if "Pricing" in m.text] == [draft.message_id]


async def test_a_provider_error_halfway_replaces_the_partial_text_with_a_clear_message(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_stream_error("Half of an answer that never")
    fake_openai.script_text("MARKER DONE")
    sabha = SabhaProcess(streaming_config(tmp_path, fake, fake_openai))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "tell me everything")
        await ask_and_mark(fake, fake_openai, "tell me everything")
    finally:
        await sabha.close()
    assert bot_texts(fake, "Half of an answer") == []  # nothing left dangling
    [clear] = bot_texts(fake, DEGRADED_REPLY[:40])
    assert DEGRADED_REPLY[:40] in clear


async def test_a_tool_call_shows_looking_it_up_which_the_answer_replaces(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_tool_call("remember", {"key": "topic", "value": "pricing"})
    fake_openai.script_text(ANSWER, chunk_delay=0.25)
    fake_openai.script_text("MARKER DONE")
    sabha = SabhaProcess(streaming_config(tmp_path, fake, fake_openai))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "what did we say about pricing?")
        [first] = await fake.wait_for_messages(1, timeout=30)
        await ask_and_mark(fake, fake_openai, "what did we say about pricing?")
    finally:
        await sabha.close()
    shown_along_the_way = [first.text] + [m.text for m in fake.edited_messages if m.message_id == first.message_id]
    assert any(LOOKING in text for text in shown_along_the_way), shown_along_the_way
    header = first.text.split("\n", 1)[0]
    assert bot_texts(fake, "Pricing is") == [final_text(header, ANSWER)]
    assert bot_texts(fake, LOOKING) == []  # the answer replaced the line
    assert [m.message_id for m in fake.sent_messages if m.message_id == first.message_id] == [first.message_id]


async def test_kill_9_during_the_final_edit_resumes_by_editing_the_same_message(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.05)
    fake_openai.script_text("MARKER DONE")
    config = streaming_config(tmp_path, fake, fake_openai, extra=["  stream_edit_interval_s: 60"])
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.set_delay("editMessageText", 30)  # the final edit hangs at Telegram...
        fake.fail_next("editMessageText", status=500)  # ... and is never carried out
        fake.push_text(OWNER, OWNER, "how do I price my product?")
        [draft] = await fake.wait_for_messages(1, timeout=30)
        await fake.wait_for_call("editMessageText", timeout=30)  # the answer's delivery has begun
        sabha.proc.kill()  # kill -9 while it is being sent
        await sabha.wait()
        fake.delays.clear()
        sabha = SabhaProcess(config)
        await sabha.start()
        await ask_and_mark(fake, fake_openai, "how do I price my product?")
    finally:
        await sabha.close()
    header = draft.text.split("\n", 1)[0]
    assert bot_texts(fake, "Pricing") == [final_text(header, ANSWER)]  # the draft became the whole answer
    assert [m.message_id for m in fake.sent_messages if "Pricing" in m.text] == [draft.message_id]


async def test_a_long_streamed_answer_continues_in_a_second_message_past_the_limit(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    long_answer = " ".join(f"Point {n}: measure what the customer pays for." for n in range(120))  # > 4096
    fake_openai.script_text(long_answer, chunk_delay=0.004)
    fake_openai.script_text("MARKER DONE")
    sabha = SabhaProcess(streaming_config(tmp_path, fake, fake_openai))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "give me the long version")
        [first] = await fake.wait_for_messages(1, timeout=30)
        await ask_and_mark(fake, fake_openai, "give me the long version")
    finally:
        await sabha.close()
    header = first.text.split("\n", 1)[0]
    expected = [c.text for c in render(long_answer, header)]
    assert len(expected) == 2
    assert bot_texts(fake, "Point ") == expected  # the draft became the first part; the rest follows once
    assert len([m for m in fake.sent_messages if "Point " in m.text]) == 2


async def test_whatsapp_does_not_stream_one_message_per_answer(tmp_path: Path, fake_graph: FakeGraphAPI,
                                                               fake_openai: FakeOpenAI) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.05)
    fake_openai.script_text("MARKER DONE")
    config = write_whatsapp_config(tmp_path, fake_graph, fake_openai)  # type: ignore[arg-type]
    line = f"      base_url: {fake_openai.base_url}\n"
    config.write_text(config.read_text(encoding="utf-8").replace(line, line + "      stream: true\n"),
                      encoding="utf-8")
    sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET})
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            assert (await post(http, url, text_notification(USERS[0], "how do I price?")))[0] == 200
            assert (await post(http, url, text_notification(USERS[0], "marker please")))[0] == 200
            await eventually(lambda: any("MARKER DONE" in s.body for s in fake_graph.sent), "the marker", timeout=30)
    finally:
        await sabha.close()
    bodies = [s.body for s in fake_graph.sent]
    assert [ANSWER in b for b in bodies] == [True, False], bodies  # the whole answer in one message
    assert fake_openai.requests[0].body.get("stream") is True  # the model did stream


def inbox_details(root: Path) -> dict[str, str]:
    """The inbox's (status, detail) per message text, from the daemon's state db."""
    with sqlite3.connect(root / "sessions" / "sabha.db") as conn:
        rows = conn.execute("SELECT envelope, status, detail FROM inbound_messages ORDER BY rowid").fetchall()
    return {json.loads(envelope)["text"]: f"{status}: {detail}" for envelope, status, detail in rows}


async def test_a_draft_deleted_mid_stream_means_the_answer_is_sent_once_and_the_outcome_says_so(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.15)
    fake_openai.script_text("MARKER DONE")
    sabha = SabhaProcess(streaming_config(tmp_path, fake, fake_openai))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "how do I price my product?")
        [draft] = await fake.wait_for_messages(1, timeout=30)
        del fake.messages[(OWNER, draft.message_id)]  # the user deletes the draft while it grows
        await ask_and_mark(fake, fake_openai, "how do I price my product?")
    finally:
        await sabha.close()
    header = draft.text.split("\n", 1)[0]
    assert bot_texts(fake, "Pricing") == [final_text(header, ANSWER)]  # one message with the whole answer
    assert inbox_details(tmp_path)["how do I price my product?"] == \
        "answered: its draft was gone: sent as a new message"


async def test_the_pause_before_a_streamed_answer_s_final_edit_lets_another_conversation_s_turn_run(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    """Issue 44 (burst46): an answer's final edit waits until a second after its draft's last request (Telegram's
    pace for one message); that pause is not a turn, so it does not hold the turn cap. With a cap of 1 and two
    chats asking at once, the second chat's turn runs (its draft goes out) while the first waits to edit; before,
    the second turn started only after the first's final edit (a burst of 300 took 16 s for a 5 s ideal: every
    turn held its slot a second after the model answered)."""
    fake_openai.script_text("First answer, about pricing and promises.", chunk_delay=0.01)
    fake_openai.script_text("Second answer, about hiring and patience.", chunk_delay=0.01)
    config = streaming_config(tmp_path, fake, fake_openai, extra=[])
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("server:\n", "inbox: {max_concurrent_turns: 1}\nserver:\n"), encoding="utf-8")
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "first question")
        fake.push_text(FRIEND, FRIEND, "second question")
        await eventually(lambda: [d for d in inbox_details(tmp_path).values() if d.startswith("answered")] == [
            "answered: edited over its draft"] * 2, "both answers edited over their drafts and recorded")
    finally:
        await sabha.close()
    order = [(method, int(p["chat_id"])) for method, p in fake.calls
             if method in ("sendMessage", "editMessageText") and int(p.get("chat_id", 0)) in (OWNER, FRIEND)]
    first, second = order[0][1], ({OWNER, FRIEND} - {order[0][1]}).pop()
    assert order.index(("sendMessage", second)) < order.index(("editMessageText", first)), order
