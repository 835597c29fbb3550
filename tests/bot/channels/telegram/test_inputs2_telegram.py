"""Telegram albums after the review of the ``inputs`` work (tests/bot/channels/telegram/test_inputs_telegram.py
has the first ones).

* Polling: every open album of a ``getUpdates`` batch is held back once, together, for
  :data:`ALBUM_WAIT_S` (not one album per poll: ten albums from ten chats were ten seconds).
* A late item of an album that was stored while another album was held is answered after a kill
  (it was grouped under the stored album's first item, a duplicate, and lost).
* Webhook: a non-first item of a stored album posted again alone is a duplicate (it was a second
  turn with only that picture); a held album does not hold back other chats' answers (the items
  posted one at a time: tests/bot/channels/telegram/test_albums_webhook.py).

The polling hold takes an injectable clock (``AlbumHold.clock``), so the unit tests here never sleep
for time; the ``sabha run`` tests wait for log lines and answers.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from board.app import Board
from bot.channels.telegram.album_items import AlbumItems
from bot.channels.telegram.albums import AlbumHold
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.inbound import TgMessage, parse_update
from bot.daemon import channel_parts
from tests.bot.channels.telegram.test_inputs_telegram import BatchFake, bfake, marker, show, webhook  # noqa: F401 - fixtures used below
from tests.bot.channels.telegram.test_telegram_media import ShowModel, picture, shown
from tests.support.daemon import WEBHOOK_SECRET, SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, photo
from tests.support.kill import MARK
from tests.support.telegram import FRIEND, OWNER, TOKEN, GatedModel, eventually, tg_settings, use_model


def raw_item(update_id: int, chat: int, message_id: int, group: str | None, text: str | None = None) -> dict[str, Any]:
    """A raw update: a photo of album ``group`` (or a text when ``group`` is None) in ``chat``'s DM."""
    message: dict[str, Any] = {"message_id": message_id, "date": 1763840000, "chat": {"id": chat, "type": "private"},
                               "from": {"id": chat, "is_bot": False, "first_name": "P"}}
    if group is None:
        message["text"] = text or "hello"
    else:
        message["photo"] = [{"file_id": f"f{update_id}", "file_unique_id": f"u{update_id}", "width": 9,
                             "height": 9}]
        message["media_group_id"] = group
    return {"update_id": update_id, "message": message}


def albums_batch(chats: int, parts: int = 2) -> list[dict[str, Any]]:
    """One batch: an album of ``parts`` photos from each of ``chats`` chats, album after album."""
    batch: list[dict[str, Any]] = []
    for c in range(chats):
        for _ in range(parts):
            n = len(batch) + 1
            batch.append(raw_item(n, 1000 + c, n, f"g{c}"))
    return batch


def hold_until_stored(hold: AlbumHold, batch: list[dict[str, Any]], clock: list[float]) -> tuple[int, float]:
    """Run the polling loop's hold on ``batch`` as the loop would (each hold waits ``hold.wait_s`` on the
    fake clock, then the held part comes back): (polls, seconds on the fake clock) until all was stored."""
    polls, start, pending = 0, clock[0], list(batch)
    while pending:
        polls += 1
        _, held = hold.split(pending)
        pending = held
        if held:
            clock[0] += hold.wait_s
    return polls, clock[0] - start


# -- finding 1: a batch is held at most once -------------------------------------------------------------


def test_two_albums_from_different_chats_in_one_batch_are_held_once_together() -> None:
    clock = [100.0]
    hold = AlbumHold(clock=lambda: clock[0])
    ready, held = hold.split(albums_batch(2))
    assert ready == [] and len(held) == 4  # both albums are open: held, the timers of both start now
    clock[0] += hold.wait_s
    ready, held = hold.split(held)
    assert len(ready) == 4 and held == [], "both albums must be stored after one hold"


def test_ten_albums_from_ten_chats_are_stored_after_one_hold() -> None:
    """Measured: polls and seconds (fake clock) until a batch of 10 two-photo albums from 10 chats is stored."""
    clock = [100.0]
    polls, seconds = hold_until_stored(AlbumHold(clock=lambda: clock[0]), albums_batch(10), clock)
    print(f"10 albums from 10 chats in one batch: stored after {polls} polls, {seconds:.1f} s held")
    assert (polls, seconds) == (2, 1.0)


def test_a_text_from_another_chat_after_an_open_album_is_held_with_it_once() -> None:
    clock = [100.0]
    hold = AlbumHold(clock=lambda: clock[0])
    batch = [*albums_batch(1), raw_item(9, 2000, 9, None, "T1 other chat")]
    polls, seconds = hold_until_stored(hold, batch, clock)
    assert (polls, seconds) == (2, 1.0)


def message(message_id: int) -> TgMessage:
    update = parse_update(raw_item(message_id, OWNER, message_id, "g"))
    assert update.message is not None
    return update.message


# -- findings 2 and 3 through a real ``sabha run`` ----------------------------------------------------------


class LostPollFake(BatchFake):
    """The fake Bot API; a long poll asking from :attr:`lose_at` never reaches it (a request lost on the way:
    its offset confirms nothing, it is never answered), as a network drop or a kill just then would."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lose_at: int | None = None
        self.lost = asyncio.Event()

    async def _get_updates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if self.lose_at is not None and p.get("offset") == self.lose_at and float(p.get("timeout") or 0) > 0:
            self.lost.set()
            await asyncio.Event().wait()  # ended when the server closes
        return await super()._get_updates(p)


@pytest.fixture
async def lfake() -> AsyncIterator[LostPollFake]:
    async with LostPollFake(token=TOKEN) as server:
        yield server


def photo_item(fake: FakeTelegramAPI, chat: int, group: str, caption: str | None = None) -> dict[str, Any]:
    thumb = fake.add_file(picture(2, 2), name="thumb.jpg")
    full = fake.add_file(picture(31, 20), name="logo.jpg")
    update = fake.build_media_update(chat, chat, photo(thumb, full), caption=caption)
    update["message"]["media_group_id"] = group
    return update


async def test_a_late_album_item_after_a_kill_while_another_album_is_held_is_answered(
    tmp_path: Path, lfake: LostPollFake, show: ShowModel  # noqa: F811 - fixture
) -> None:
    a1, a2 = photo_item(lfake, OWNER, "A", "L1 first album"), photo_item(lfake, OWNER, "A")
    x1 = lfake.build_text_update(OWNER, OWNER, "L2 after the album")  # closes album A in this batch
    b1 = photo_item(lfake, FRIEND, "B", "L3 friend's album")  # open at the batch's end: held
    lfake.lose_at = b1["update_id"]
    process = SabhaProcess(write_config(tmp_path, lfake, show))
    try:
        await process.start()
        for update in (a1, a2, x1, b1):
            lfake.push_update(update)
        await process.wait_for_log("holding back an album", timeout=60)
        await asyncio.wait_for(lfake.lost.wait(), 60)  # the poll after the hold went nowhere
        a3 = lfake.push_update(photo_item(lfake, OWNER, "A"))  # a late item of album A
        lfake.push_text(FRIEND, FRIEND, "L5 friend again")  # so no album is open at the restart's batch
        lfake.push_text(OWNER, OWNER, "L6 owner again")
        await process.signal(signal.SIGKILL)
        lfake.lose_at = None
        await process.start()
        answers = await marker(lfake, "L4 marker")
        await eventually(lambda: len(lfake.sent_to(FRIEND)) == 2, "the friend's album and L5 answered", timeout=60)
    finally:
        await process.close()
    said = answers[:-1]
    before = [a for a in said if MARK not in a]
    again = [a.replace(f"{MARK}\n\n", "") for a in said if MARK in a]  # a reply the kill cut off while it was being
    assert len(again) <= 1 and all(a in before for a in again), said  # sent comes once more, marked: never plain
    assert len(before) == 4, f"album A, L2, the late item A3 ({a3['update_id']}) and L6 must be answered: {before}"
    assert [sum(m in a for a in before) for m in ("L1", "L2", "L6")] == [1, 1, 1], before
    assert [a.count("[image attached") for a in before if not any(m in a for m in ("L1", "L2", "L6"))] == [1], before
    assert len(lfake.sent_to(FRIEND)) == 2, [m.text for m in lfake.sent_to(FRIEND)]


async def test_in_webhook_mode_a_non_first_album_item_posted_again_alone_is_a_duplicate(
    bfake: BatchFake, webhook: SabhaProcess, show: ShowModel  # noqa: F811 - fixtures
) -> None:
    fake = bfake
    url = f"http://127.0.0.1:{webhook.port}/telegram/webhook"
    items = [photo_item(fake, OWNER, "W", "W1 which logo?"), photo_item(fake, OWNER, "W")]
    posted = await asyncio.gather(*(fake.deliver_webhook(url, u, WEBHOOK_SECRET) for u in items))
    assert [code for code, _ in posted] == [200, 200], posted
    await eventually(lambda: fake.sent_to(OWNER), "the album's answer", timeout=60)
    assert (await fake.deliver_webhook(url, items[1], WEBHOOK_SECRET))[0] == 200  # its 200 was lost: again
    done = fake.build_text_update(OWNER, OWNER, "W2 marker")
    assert (await fake.deliver_webhook(url, done, WEBHOOK_SECRET))[0] == 200
    await eventually(lambda: any("W2" in m.text for m in fake.sent_to(OWNER)), "the marker's answer", timeout=60)
    answers = [m.text for m in fake.sent_to(OWNER)][:-1]
    assert len(answers) == 1, f"the album must be one turn, the item posted again a duplicate: {answers}"
    assert "W1" in answers[0] and answers[0].count("[image attached") == 2, answers


# -- finding 4: a held album does not hold back other chats' answers ----------------------------------


async def test_a_held_webhook_album_does_not_hold_back_another_chats_answer(
    board: Board, fake: FakeTelegramAPI
) -> None:
    model = use_model(board, GatedModel())
    settings = tg_settings(fake, mode="webhook", webhook_secret="s3cret-token_1",
                           webhook_url="https://sabha.example.org/telegram/webhook")
    channel = TelegramChannel(channel_parts(board), settings)
    channel.album_posts.wait_s = 120.0  # held for as long as the test runs, unless something follows it
    channel.hub.scheduler.max_defer = 120.0  # a hold would last as long as the gathering: unmistakable
    app = web.Application()
    app.add_routes(channel.routes())
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/telegram/webhook"
    try:
        await channel.start()
        item = fake.build_media_update(OWNER, OWNER, photo(fake.add_file(picture(3, 3), name="a.jpg"),
                                                           fake.add_file(picture(30, 20), name="b.jpg")),
                                       caption="G1 an album")
        item["message"]["media_group_id"] = "G"
        assert (await fake.deliver_webhook(url, item, "s3cret-token_1"))[0] == 200  # kept: answered at once
        status, _ = await fake.deliver_webhook(url, fake.build_text_update(FRIEND, FRIEND, "G2 other chat"),
                                               "s3cret-token_1")
        assert status == 200
        await asyncio.wait_for(model.started_event("G2 other chat").wait(), 30)
        assert channel.album_posts.holding() == [(OWNER, "G")], "the album was still held"
        status, _ = await fake.deliver_webhook(url, fake.build_text_update(OWNER, OWNER, "G3 after the album"),
                                               "s3cret-token_1")
        assert status == 200  # something else from the album's chat: the album is stored first
        await eventually(lambda: len(fake.sent_to(OWNER)) == 2, "the album's and G3's answers", timeout=30)
        assert "30x20" in fake.sent_to(OWNER)[0].text and "G3" in fake.sent_to(OWNER)[1].text  # the album first
    finally:
        await channel.stop()
        await runner.cleanup()


# -- finding 1 and 5 through a real ``sabha run``: albums of one batch, from two chats and from one -------------


@pytest.fixture
async def polling2(tmp_path: Path, bfake: BatchFake, show: ShowModel  # noqa: F811 - fixtures
                   ) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` polling the fake Bot API; the model shows what it was given."""
    process = SabhaProcess(write_config(tmp_path, bfake, show))
    try:
        await process.start()
        yield process
    finally:
        await process.close()


async def test_two_albums_from_two_chats_in_one_batch_are_held_back_once_and_answered_once_each(
    bfake: BatchFake, polling2: SabhaProcess, show: ShowModel  # noqa: F811 - fixtures
) -> None:
    items = [photo_item(bfake, OWNER, "P", "P1 owner's album"), photo_item(bfake, OWNER, "P"),
             photo_item(bfake, FRIEND, "Q", "Q1 friend's album"), photo_item(bfake, FRIEND, "Q")]
    bfake.served.clear()
    for update in items:
        bfake.push_update(update)  # one batch: the daemon reads them in one getUpdates
    await asyncio.wait_for(bfake.served.wait(), 60)
    assert bfake.batches[-1] == [u["update_id"] for u in items], bfake.batches
    answers = await marker(bfake, "P2 marker")  # after the batch: it closes neither album in it
    await eventually(lambda: bfake.sent_to(FRIEND), "the friend's album answered", timeout=60)
    holds = [line for line in polling2.lines if "holding back an album" in line]
    assert len(holds) == 1, holds  # both albums waited together, once
    before = answers[:-1]
    assert len(before) == 1 and "P1" in before[0] and before[0].count("[image attached") == 2, before
    [friend] = [m.text for m in bfake.sent_to(FRIEND)]
    assert "Q1" in friend and friend.count("[image attached") == 2, friend


async def test_two_albums_in_one_chat_in_one_batch_are_two_turns_with_their_own_pictures(
    bfake: BatchFake, polling2: SabhaProcess, show: ShowModel  # noqa: F811 - fixtures
) -> None:
    items = [photo_item(bfake, OWNER, "R", "R1 first album"), photo_item(bfake, OWNER, "R"),
             photo_item(bfake, OWNER, "S", "S1 second album"), photo_item(bfake, OWNER, "S"),
             photo_item(bfake, OWNER, "S")]
    for update in items:
        bfake.push_update(update)
    answers = await marker(bfake, "R2 marker")
    before = answers[:-1]
    assert len(before) == 2 and "R1" in before[0] and "S1" in before[1], before
    assert [a.count("[image attached") for a in before] == [2, 3], before


# -- the album items record on both storage backends ---------------------------------------------------------


@pytest.mark.backends
async def test_the_album_items_record_leaves_out_what_was_stored_on_both_backends(board: Board) -> None:
    items = AlbumItems(board.parts.db)
    first = [message(1), message(2)]
    assert await items.fresh(first) == first
    await items.record([first])
    await items.record([first])  # recorded twice (a crash before the 200): no error, no second row
    regrouped = [message(1), message(2), message(3)]
    assert [m.message_id for m in await items.fresh(regrouped)] == [3]
    await items.prune()  # nothing is a week old
    assert await items.fresh([message(2)]) == []


async def test_an_edited_album_caption_gets_the_edits_line_once_and_the_album_is_answered_once(
    bfake: BatchFake, polling2: SabhaProcess, show: ShowModel  # noqa: F811 - fixtures
) -> None:
    items = [photo_item(bfake, OWNER, "E", "E1 which logo?"), photo_item(bfake, OWNER, "E")]
    for update in items:
        bfake.push_update(update)
    await eventually(lambda: bfake.sent_to(OWNER), "the album's answer", timeout=60)
    edited = dict(items[0]["message"], caption="E1 which logo is bolder?", edit_date=1763840100)
    bfake.push_update({"edited_message": edited})
    answers = await marker(bfake, "E2 marker")
    before = answers[:-1]
    assert len(before) == 2 and "E1 which logo?" in before[0] and before[0].count("[image attached") == 2, before
    assert "edits" in before[1] and "[image attached" not in before[1], before
    assert sum("bolder" in shown(b) for b in show.bodies) == 0, "an edit is not a question"
