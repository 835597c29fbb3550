"""Killed at any moment, nobody is left silently unanswered (issue: item 1).

A real ``sabha run`` (real PTB against the fake Bot API, the echo model) gets 100 questions from 50 private
chats, is SIGKILLed at one moment of the burst, started again, and every question is counted at the fake:
answered at least once, and a second copy only where the README says Telegram leaves no way to know (the
request had left when Sabha died), and then marked as possibly repeated. The moments:

* **model**: every turn at the model;
* **send queue**: replies stored and waiting for a connection (typing indicators hold every pooled
  connection): nothing of them has left, so they must be sent at the restart, unmarked (no marked copy at
  all in this round and the model's: a marked-only copy there is the early mark come back);
* **on the wire, not posted**: reply requests written and held by the fake, which drops them after the
  kill (the request never made it whole): the restart sends them once more, marked;
* **on the wire, posted**: the same, the fake posts them after the kill: the marked copy is a second one;
* **anywhere**: no hold at all, the kill lands wherever the daemon is.

What was seen before: the "sending" mark was taken before the request waited for a connection, so a kill
in the send queue left replies "may have arrived" that never left (never sent again: lost and untold).
"""

from __future__ import annotations

import re
import signal
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from tests.support.daemon import SabhaProcess, markers, where_they_stand, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.kill import (
    HoldingTelegramAPI,
    allow_users,
    answered_count,
    chat_updates,
    private_chats,
    settled,
    stored_unsent,
    typing_at_once,
    verdict,
    wait_for,
)
from tests.support.telegram import TOKEN

pytestmark = pytest.mark.xdist_group("bursts")

BURST = 100
CHATS = 50
CAP = 8  # inbox.max_concurrent_turns
CLOSING = 900  # the closing questions of a round are Q900...: one per chat, counted apart
POOL = 2 * CAP + 8  # the Telegram channel's connection pool for that cap (bot/channels/telegram/channel.py)

#: What a moment does before the kill (returns what to do after it).
Moment = Callable[[HoldingTelegramAPI, EchoModel, Path, list[str]], Awaitable[Callable[[], None]]]


@pytest.fixture
async def telegram() -> AsyncIterator[HoldingTelegramAPI]:
    async with HoldingTelegramAPI(token=TOKEN) as server:
        yield server


async def at_the_model(telegram: HoldingTelegramAPI, model: EchoModel, db: Path, wanted: list[str]) -> Callable[
        [], None]:
    await wait_for(lambda: answered_count(telegram, wanted) >= 10, "10 answers")
    model.hold()
    await wait_for(lambda: model.in_flight == CAP, f"{CAP} turns at the model")
    return model.release


async def in_the_send_queue(telegram: HoldingTelegramAPI, model: EchoModel, db: Path, wanted: list[str]) -> Callable[
        [], None]:
    await wait_for(lambda: telegram.waiting("sendChatAction") >= POOL, f"{POOL} typing requests holding the pool")
    await wait_for(lambda: stored_unsent(db, telegram, wanted) >= 4, "4 replies stored and waiting to be sent")
    return lambda: telegram.release("sendChatAction")


async def on_the_wire(telegram: HoldingTelegramAPI, post: bool) -> Callable[[], None]:
    telegram.hold("sendMessage")
    await wait_for(lambda: telegram.waiting("sendMessage") >= 3, "3 replies on the wire")
    return lambda: telegram.release("sendMessage", post=post)


async def on_the_wire_not_posted(telegram: HoldingTelegramAPI, model: EchoModel, db: Path,
                                 wanted: list[str]) -> Callable[[], None]:
    await wait_for(lambda: answered_count(telegram, wanted) >= 20, "20 answers")
    return await on_the_wire(telegram, post=False)


async def on_the_wire_posted(telegram: HoldingTelegramAPI, model: EchoModel, db: Path,
                             wanted: list[str]) -> Callable[[], None]:
    await wait_for(lambda: answered_count(telegram, wanted) >= 30, "30 answers")
    return await on_the_wire(telegram, post=True)


async def anywhere(telegram: HoldingTelegramAPI, model: EchoModel, db: Path, wanted: list[str]) -> Callable[
        [], None]:
    await wait_for(lambda: answered_count(telegram, wanted) >= 45, "45 answers")
    return lambda: None


def sending_rows(db: Path, wanted: list[str]) -> int:
    """Questions of ``wanted`` whose reply's request had started to be written (rows 'sending')."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        rows = conn.execute("SELECT envelope FROM inbound_messages WHERE status = 'sending'").fetchall()
    return sum(1 for (envelope,) in rows if (found := re.search(r"\b(Q\d{3})\b", envelope or "")) and
               found.group(1) in wanted)


MOMENTS: dict[str, Moment] = {
    "model": at_the_model,
    "send queue": in_the_send_queue,
    "wire, not posted": on_the_wire_not_posted,
    "wire, posted": on_the_wire_posted,
    "anywhere": anywhere,
}


async def test_sigkill_at_any_moment_leaves_nobody_unanswered_and_marks_every_second_copy(
        tmp_path: Path, telegram: HoldingTelegramAPI) -> None:
    chats = private_chats(CHATS)
    report: list[str] = []
    async with EchoModel(latency=0.2) as model:
        config = write_config(tmp_path, telegram, model, inbox={"max_concurrent_turns": CAP})
        allow_users(config, chats)
        typing_at_once(config)
        sabha = SabhaProcess(config)
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            for round_, (name, moment) in enumerate(MOMENTS.items()):
                first = round_ * BURST
                wanted = markers(BURST, first)
                if name == "send queue":  # typing indicators take every connection as the burst starts
                    telegram.hold("sendChatAction")
                for update in chat_updates(telegram, chats, BURST, first):
                    telegram.push_update(update)
                after_kill = await moment(telegram, model, db, wanted)
                before = answered_count(telegram, wanted)
                waiting = stored_unsent(db, telegram, wanted)
                await sabha.signal(signal.SIGKILL)
                on_wire = sending_rows(db, wanted)  # requests that had started to be written: the only ones to repeat
                after_kill()
                await sabha.start()
                try:
                    await wait_for(lambda w=wanted: settled(db, w), f"every question of the burst killed at '{name}' "  # type: ignore[misc]
                                   "answered or given up")
                    # nothing twice: one more question in every chat, answered, before counting
                    for update in chat_updates(telegram, chats, CHATS, CLOSING):
                        telegram.push_update(update)
                    await wait_for(lambda: answered_count(telegram, markers(CHATS, CLOSING)) == CHATS,
                                   "the closing questions answered")
                finally:
                    seen = verdict(telegram, BURST, first)
                    lost, unmarked_twice = seen.lost, seen.unmarked_twice
                    report.append(f"  {name:>17}  {before:>8}  {waiting:>15}  {len(lost):>4}  {len(unmarked_twice):>14}"
                                  f"  {seen.marked_only:>11}  {seen.marked_second:>13}")
                    telegram.sent_messages[:] = [m for m in telegram.sent_messages if " Q9" not in m.text]  # CLOSING
                assert (lost, unmarked_twice) == ([], []), \
                    f"kill at '{name}':\n{where_they_stand(tmp_path / 'sessions', lost + unmarked_twice)}"
                if name in ("model", "send queue"):  # nothing of these replies had left: sent at the restart, unmarked
                    assert (seen.marked_only, seen.marked_second) == (0, 0), f"kill at '{name}': {seen}"
                elif name.startswith("wire"):  # a marked copy only for a request that was on the wire
                    assert seen.marked_only + seen.marked_second <= on_wire, f"kill at '{name}': {seen}, {on_wire} left"
        finally:
            await sabha.close()
            print(f"\nSIGKILL mid-burst ({BURST} questions from {CHATS} chats, cap {CAP}, 200 ms model), then restart:")
            print("         kill while  answered  replies waiting  lost  twice unmarked  marked only  marked second")
            print("\n".join(report))
