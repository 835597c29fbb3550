"""Nothing lost, nothing answered twice: a real ``sabha run`` killed mid-burst, then restarted.

Each test drives the real daemon process (real PTB against the fake Bot API, the real
OpenAI SDK against a fixed-latency echo model) with a burst spread over five forum
topics, General and two DMs, stops it hard in the middle, starts it again and counts
per message how often it was answered. What was seen before the shared intake: 19-47
of 100 lost per SIGKILL, 35 of 60 acknowledged webhook updates lost, 38 of 60 lost on a
SIGTERM with a short grace.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from functools import partial
from pathlib import Path

import pytest
from aiohttp import ClientError, ClientSession

from tests.support.daemon import (
    WEBHOOK_SECRET,
    SabhaProcess,
    answered,
    answered_everywhere_after,
    burst_places,
    burst_updates,
    markers,
    tally,
    wait_answered,
    where_they_stand,
    write_config,
)
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI

BURST = 100
MARKERS = 900  # Q900 ...: the markers sent after a burst, before counting it

# The bursts (a hundred messages through a real daemon, killed mid-way) run one after the other on one
# xdist worker (`make test`: --dist loadgroup), not two at once on a small machine.
pytestmark = pytest.mark.xdist_group("bursts")

MOMENTS = (1, 10, 30, 55, 80)  # answers out before the kill (then: every lane mid-turn)


@pytest.fixture
def telegram(fake: FakeTelegramAPI) -> FakeTelegramAPI:
    return fake


@pytest.fixture
def model(echo_model: EchoModel) -> EchoModel:
    return echo_model


def unanswered_per_lane(telegram: FakeTelegramAPI, places: int, first: int) -> dict[int, int]:
    """Questions of this burst still unanswered, per place (one lane each), for the places that have some."""
    seen = answered(telegram)
    left: dict[int, int] = {}
    for m in markers(BURST, first):
        if not seen[m]:
            left[int(m[1:]) % places] = left.get(int(m[1:]) % places, 0) + 1
    return left


def state_db(root: Path) -> Path:
    """The daemon's SQLite state store under its workspace ``root``."""
    return root / "sessions" / "sabha.db"


def lanes_with_work(telegram: FakeTelegramAPI, places: int, first: int) -> int:
    """How many places (one lane each) still have questions of this burst unanswered."""
    return len(unanswered_per_lane(telegram, places, first))


def replies_sending(db: Path) -> int:
    """Replies whose request had started to leave and whose outcome is not stored yet (rows 'sending')."""
    assert db.exists(), db  # the daemon has started: its store is there
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        return int(conn.execute("SELECT count(*) FROM inbound_messages WHERE status = 'sending'").fetchone()[0])


async def mid_turn_everywhere(model: EchoModel, telegram: FakeTelegramAPI, places: int, first: int = 0,
                              timeout: float = 120.0, *, db: Path) -> int:
    """Hold the model and wait until the turn of every lane that still has work is at it (none is between
    'sending' and Telegram's answer, the one window where a crash can only leave "may have arrived"); returns
    how many lanes that is. Held, the lanes stay there however slow a loaded machine is (unheld, on a busy
    machine the lanes could finish their backlog between two looks); the caller kills the daemon, then
    releases the model. Each lane has at most one turn at the model, and a lane whose answer is on its way
    still has its question unanswered, so the two counts meet only when every busy lane is at the model.
    (It waited for all 8 lanes: on a loaded machine one place had had all its questions answered by the
    80th answer, its lane stayed idle and the wait ran out with 5 in flight.) A lane whose LAST question's answer
    has reached Telegram counts as done here while its outcome may not be stored yet (its row still 'sending': a
    kill then leaves "may have arrived", sent once more, marked); so the wait also needs no row 'sending' (once,
    on a loaded CI machine, the kill after 10 answers fell in that window and counted Q110 twice)."""
    model.hold()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while ((busy := lanes_with_work(telegram, places, first)) != model.in_flight or busy == 0
           or replies_sending(db)):
        if loop.time() > deadline:
            raise AssertionError(f"the lanes with work never were all mid-turn (in flight: {model.in_flight}, "
                                 f"lanes with work: {busy})")
        await asyncio.sleep(0.002)
    return busy


async def test_sigkill_at_five_moments_of_a_burst_loses_and_duplicates_nothing(
    tmp_path: Path, telegram: FakeTelegramAPI, model: EchoModel
) -> None:
    sabha = SabhaProcess(write_config(tmp_path, telegram, model))
    report = []
    try:
        await sabha.start()  # the first start creates the forum topics
        places = burst_places(telegram)
        for round_, moment in enumerate(MOMENTS):
            first = round_ * BURST
            for update in burst_updates(telegram, places, BURST, first):
                telegram.push_update(update)
            await wait_answered(telegram, BURST, first, at_least=moment)
            busy = await mid_turn_everywhere(model, telegram, len(places), first, db=state_db(tmp_path))
            acknowledged = not telegram.pending_updates  # Telegram was told it has them all
            # questions waiting behind the turn at the model (stored, not started): what the kill must not lose
            backlog = sum(1 for n in unanswered_per_lane(telegram, len(places), first).values() if n > 1)
            before = sum(1 for m in markers(BURST, first) if answered(telegram)[m])
            await sabha.signal(signal.SIGKILL)
            model.release()
            await sabha.start()
            await wait_answered(telegram, BURST, first)
            await answered_everywhere_after(telegram, places, MARKERS + round_ * len(places))  # then count
            lost, duplicated = tally(telegram, BURST, first)
            taken_up = next((line for line in sabha.lines if "taking up" in line), "")
            taken = taken_up.split("taking up ")[-1][:3].strip()
            report.append((moment, before, acknowledged, f"{backlog} of {busy}", taken, len(lost), len(duplicated)))
            assert acknowledged and backlog > 0, (moment, telegram.pending_updates[:2])
            assert (lost, duplicated) == ([], []), f"kill after {moment} answers"
    finally:
        await sabha.close()
        print("\nSIGKILL mid-burst (100 messages over 8 places, 200 ms model):")
        print("  kill after  answered  all acked  lanes with a backlog / busy  taken up  lost  duplicated")
        for moment, before, acked, backlog, taken, lost_n, dup_n in report:
            print(f"  {moment:>10}  {before:>8}  {acked!s:>9}  {backlog:>27}  {taken:>8}  {lost_n:>4}  {dup_n:>10}")


async def test_sigterm_with_a_grace_shorter_than_the_backlog_keeps_the_rest_for_the_next_start(
    tmp_path: Path, telegram: FakeTelegramAPI
) -> None:
    async with EchoModel(latency=1.0) as slow:
        sabha = SabhaProcess(write_config(tmp_path, telegram, slow, inbox={"shutdown_grace_s": 0.3}))
        try:
            await sabha.start()
            places = burst_places(telegram)
            for update in burst_updates(telegram, places, 60):
                telegram.push_update(update)
            await wait_answered(telegram, 60, at_least=3)
            assert await sabha.signal(signal.SIGTERM) == 0, sabha.log
            stopped_log = sabha.log
            answered_before = 60 - len(tally(telegram, 60)[0])
            assert answered_before < 60
            await sabha.start()
            await wait_answered(telegram, 60, timeout=180)
            await answered_everywhere_after(telegram, places, MARKERS)  # a duplicate would be out by then
        finally:
            await sabha.close()
    assert tally(telegram, 60) == ([], [])
    assert "Traceback" not in stopped_log and "sabha stopped" in stopped_log
    assert "stay in the inbox" in stopped_log  # the log says what happens to the rest
    print(f"\nSIGTERM, grace 0.3 s, 60 messages, 1 s model: {answered_before} answered before the stop, "
          f"{60 - answered_before} after the restart; lost 0, duplicated 0")


async def _post(session: ClientSession, url: str, update: dict[str, object]) -> int:
    headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
    try:
        async with session.post(url, json=update, headers=headers) as resp:
            return resp.status
    except (TimeoutError, ClientError, OSError):
        return 0


async def test_webhook_mode_kill_loses_no_acknowledged_update(
    tmp_path: Path, telegram: FakeTelegramAPI, model: EchoModel
) -> None:
    """Like Telegram: an update is delivered until it is answered 200, and may come twice."""
    sabha = SabhaProcess(write_config(tmp_path, telegram, model, mode="webhook"))
    try:
        await sabha.start()
        places = burst_places(telegram)
        updates = burst_updates(telegram, places, BURST)
        async with ClientSession() as session:
            url = f"http://127.0.0.1:{sabha.port}/telegram/webhook"
            statuses = await asyncio.gather(*(_post(session, url, u) for u in updates))
            assert set(statuses) == {200}, statuses  # all acknowledged before the crash: none to redeliver
            await wait_answered(telegram, BURST, at_least=20)
            # not in "may have arrived" (see above)
            await mid_turn_everywhere(model, telegram, len(places), db=state_db(tmp_path))
            await sabha.signal(signal.SIGKILL)
            model.release()
            await sabha.start()
            url = f"http://127.0.0.1:{sabha.port}/telegram/webhook"
            # Telegram may deliver some acknowledged ones again.
            again = await asyncio.gather(*(_post(session, url, u) for u in updates[:10]))
            assert set(again) == {200}, again
            try:
                await wait_answered(telegram, BURST)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{where_they_stand(tmp_path / 'sessions', tally(telegram, BURST)[0])}"
                                     "\n" + "\n".join(sabha.lines[-40:])) from None
            await answered_everywhere_after(telegram, places, MARKERS, send=partial(_post, session, url))
    finally:
        await sabha.close()
    lost, duplicated = tally(telegram, BURST)
    print(f"\nwebhook, SIGKILL after 20 answers: lost {len(lost)}, duplicated {len(duplicated)}")
    assert (lost, duplicated) == ([], [])
