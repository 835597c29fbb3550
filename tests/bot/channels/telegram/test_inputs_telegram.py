"""What Sabha reads from Telegram (issue items 11, 12, 13), through a real ``sabha run`` on the fake Bot API.

* An album (photos sent together: one message each, one ``media_group_id``, the caption on one
  of them) is one turn with every picture and the caption, whether its parts come in one
  ``getUpdates`` batch or across two; a kill while an album is held back loses nothing and
  answers it once.
* An update written before 2019 (no ``is_bot``, no ``file_unique_id``) is read on both paths;
  an update that cannot be a message is skipped with a log line and 200 in webhook mode, as
  polling skips it.
* A service message (even with an empty ``new_chat_members``) is skipped with one log line
  saying why; ``/cmd@otherbot`` in a group is not ours (no answer), ``/cmd@ourbot`` is.

"Nothing twice" is proven with a marker message sent afterwards and answered: one sender's
messages are answered in order.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

from tests.bot.channels.telegram.test_telegram_media import ShowModel, picture, shown
from tests.support.daemon import WEBHOOK_SECRET, SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, photo
from tests.support.telegram import FORUM, OWNER, TOKEN, eventually

CAPTION = "A1 which of these two logos is better?"


class BatchFake(FakeTelegramAPI):
    """The fake Bot API, recording every batch ``getUpdates`` returned (to split an album across two)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batches: list[list[int]] = []
        self.served = asyncio.Event()

    async def _get_updates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        batch = await super()._get_updates(p)
        if batch:
            self.batches.append([u["update_id"] for u in batch])
            self.served.set()
        return batch


@pytest.fixture
async def bfake() -> AsyncIterator[BatchFake]:
    async with BatchFake(token=TOKEN) as server:
        yield server


@pytest.fixture
async def show() -> AsyncIterator[ShowModel]:
    async with ShowModel() as model:
        yield model


@pytest.fixture
async def polling(tmp_path: Path, bfake: BatchFake, show: ShowModel) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` polling the fake Bot API; the model shows what it was given."""
    process = SabhaProcess(write_config(tmp_path, bfake, show))
    try:
        await process.start()
        yield process
    finally:
        await process.close()


@pytest.fixture
async def webhook(tmp_path: Path, bfake: BatchFake, show: ShowModel) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` in webhook mode on the fake Bot API."""
    config = write_config(tmp_path, bfake, show, mode="webhook",
                          extra=["  webhook_url: https://sabha.example.org/telegram/webhook"])
    process = SabhaProcess(config)
    try:
        await process.start()
        yield process
    finally:
        await process.close()


def album(fake: FakeTelegramAPI, group: str = "13579024681357902", parts: int = 2) -> list[dict[str, Any]]:
    """``parts`` photo messages of one album in the owner's DM; the caption on the first, as Telegram sends it."""
    updates = []
    for i in range(parts):
        thumb = fake.add_file(picture(2, 2), name=f"thumb{i}.jpg")
        full = fake.add_file(picture(30 + i, 20), name=f"logo{i}.jpg")
        update = fake.build_media_update(OWNER, OWNER, photo(thumb, full), caption=CAPTION if i == 0 else None)
        update["message"]["media_group_id"] = group
        updates.append(update)
    return updates


async def marker(fake: FakeTelegramAPI, text: str) -> list[str]:
    """Send ``text`` from the owner and wait for its answer; every answer the owner got, in order."""
    fake.push_text(OWNER, OWNER, text)
    await eventually(lambda: any(text in m.text for m in fake.sent_to(OWNER)), f"the answer to {text!r}",
                     timeout=60)
    return [m.text for m in fake.sent_to(OWNER)]


def assert_one_album_answer(answers: list[str], show: ShowModel, parts: int = 2) -> None:
    before = answers[:-1]
    assert len(before) == 1, f"an album must be one turn, got {len(before)} answers: {before}"
    assert CAPTION in before[0] and before[0].count("[image attached") == parts, before[0]
    assert sum(CAPTION in shown(b) for b in show.bodies) == 1, "the album's question went to the model more than once"


# -- 11: an album is one turn ---------------------------------------------------------------------------


async def test_an_album_in_one_batch_is_one_turn_with_both_pictures_and_the_caption(
    bfake: BatchFake, polling: SabhaProcess, show: ShowModel
) -> None:
    for update in album(bfake):
        bfake.push_update(update)
    answers = await marker(bfake, "M1 marker")
    assert_one_album_answer(answers, show)


async def test_an_album_split_across_two_polls_is_one_turn(
    bfake: BatchFake, polling: SabhaProcess, show: ShowModel
) -> None:
    first, second = album(bfake)
    bfake.served.clear()
    bfake.push_update(first)
    await asyncio.wait_for(bfake.served.wait(), 30)  # a batch with only the album's head went out
    bfake.push_update(second)
    answers = await marker(bfake, "M2 marker")
    assert_one_album_answer(answers, show)
    assert any(first["update_id"] in b and second["update_id"] not in b for b in bfake.batches), bfake.batches


async def test_a_kill_while_an_album_is_held_loses_nothing_and_answers_it_once(
    tmp_path: Path, bfake: BatchFake, show: ShowModel
) -> None:
    first, second = album(bfake)
    process = SabhaProcess(write_config(tmp_path, bfake, show))
    try:
        await process.start()
        bfake.served.clear()
        bfake.push_update(first)
        await process.wait_for_log("holding back an album", timeout=60)  # read, and held: kill it now
        await process.signal(signal.SIGKILL)
        bfake.push_update(second)
        await process.start()
        answers = await marker(bfake, "M3 marker")
    finally:
        await process.close()
    assert_one_album_answer(answers, show)


# -- 12: old updates are read on both paths; what cannot be a message is skipped on both -------------------


def old_photo(fake: FakeTelegramAPI, caption: str) -> dict[str, Any]:
    """A photo as the Bot API sent it before 2019: no ``is_bot``, no ``file_unique_id``."""
    full = fake.add_file(picture(30, 20), name="old.jpg")
    update = fake.build_media_update(OWNER, OWNER, {"photo": [{"file_id": full.file_id, "file_size": full.size,
                                                                "width": 90, "height": 67}]}, caption=caption)
    del update["message"]["from"]["is_bot"]
    return update


async def test_an_update_from_before_2019_is_read_by_polling(
    bfake: BatchFake, polling: SabhaProcess, show: ShowModel
) -> None:
    bfake.push_update(old_photo(bfake, "O1 an old photo"))
    answers = await marker(bfake, "M4 marker")
    assert len(answers) == 2 and "O1 an old photo" in answers[0] and "[image attached" in answers[0], answers


async def test_in_webhook_mode_an_old_update_is_read_and_one_that_cannot_be_a_message_is_skipped_with_200(
    bfake: BatchFake, webhook: SabhaProcess, show: ShowModel
) -> None:
    url = f"http://127.0.0.1:{webhook.port}/telegram/webhook"
    broken = bfake.build_text_update(OWNER, OWNER, "B1 broken")
    broken["message"]["chat"]["id"] = "not a chat id"
    assert (await bfake.deliver_webhook(url, broken, WEBHOOK_SECRET))[0] == 200  # polling skips it too
    old = old_photo(bfake, "O2 an old photo")
    assert (await bfake.deliver_webhook(url, old, WEBHOOK_SECRET))[0] == 200
    async with ClientSession() as http:
        headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET, "Content-Type": "application/json"}
        async with http.post(url, data=b"[1, 2", headers=headers) as resp:
            assert resp.status == 400  # not JSON: not an update at all
    done = bfake.build_text_update(OWNER, OWNER, "M5 marker")
    assert (await bfake.deliver_webhook(url, done, WEBHOOK_SECRET))[0] == 200
    await eventually(lambda: any("M5" in m.text for m in bfake.sent_to(OWNER)), "the marker's answer", timeout=60)
    answers = [m.text for m in bfake.sent_to(OWNER)]
    assert len(answers) == 2 and "O2 an old photo" in answers[0], answers
    assert any("skipped update" in line and str(broken["update_id"]) in line for line in webhook.lines), webhook.log


# -- 13: service messages and commands for other bots -------------------------------------------------------


async def test_a_service_message_with_an_empty_list_is_skipped_with_one_log_line(
    bfake: BatchFake, polling: SabhaProcess
) -> None:
    joined = bfake.build_text_update(FORUM, OWNER, "")
    del joined["message"]["text"]
    joined["message"]["new_chat_members"] = []
    bfake.push_update(joined)
    photo_changed = bfake.build_text_update(FORUM, OWNER, "")
    del photo_changed["message"]["text"]
    photo_changed["message"]["new_chat_photo"] = []
    bfake.push_update(photo_changed)
    answers = await marker(bfake, "M6 marker")
    assert len(answers) == 1, answers
    for update, key in ((joined, "new_chat_members"), (photo_changed, "new_chat_photo")):
        message_id = update["message"]["message_id"]
        lines = [line for line in polling.lines if "service message" in line and key in line
                 and f"message {message_id} " in line]
        assert len(lines) == 1 and "INFO" in lines[0], polling.log


async def test_a_command_for_another_bot_in_a_group_is_ignored_and_one_for_us_is_answered(
    bfake: BatchFake, polling: SabhaProcess, show: ShowModel
) -> None:
    bfake.push_text(FORUM, OWNER, "/report@otherbot weekly numbers")
    bfake.push_text(FORUM, OWNER, " /report@OtherBot the numbers, again")  # routing reads past leading blanks
    bfake.push_text(FORUM, OWNER, "/help@sabha_test_bot")
    bfake.push_text(FORUM, OWNER, "M7 marker")
    await eventually(lambda: any("M7" in m.text for m in bfake.sent_to(FORUM)), "the marker's answer", timeout=60)
    answers = [m.text for m in bfake.sent_to(FORUM)]
    assert not any("Unknown command" in a for a in answers), answers
    assert len(answers) == 2 and "/help" in answers[0], answers
    bfake.push_text(OWNER, OWNER, "/help@otherbot")  # a DM reaches only this bot: answered
    await marker(bfake, "M9 marker")
    assert len([m.text for m in bfake.sent_to(OWNER)]) == 2, [m.text for m in bfake.sent_to(OWNER)]


async def test_in_webhook_mode_an_album_posted_in_parallel_requests_is_one_turn(
    bfake: BatchFake, webhook: SabhaProcess, show: ShowModel
) -> None:
    url = f"http://127.0.0.1:{webhook.port}/telegram/webhook"
    posted = await asyncio.gather(*(bfake.deliver_webhook(url, u, WEBHOOK_SECRET) for u in album(bfake)))
    assert [code for code, _ in posted] == [200, 200], posted  # each answered once the album is stored
    done = bfake.build_text_update(OWNER, OWNER, "M8 marker")
    assert (await bfake.deliver_webhook(url, done, WEBHOOK_SECRET))[0] == 200
    await eventually(lambda: any("M8" in m.text for m in bfake.sent_to(OWNER)), "the marker's answer", timeout=60)
    assert_one_album_answer([m.text for m in bfake.sent_to(OWNER)], show)
