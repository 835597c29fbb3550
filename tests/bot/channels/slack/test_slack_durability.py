"""Slack durability on a real ``sabha run``: a hundred signed events from several users, SIGKILL while some are not
yet acknowledged and some are answered, a restart, and Slack's retries (``X-Slack-Retry-Num``) of everything that
was never acknowledged. Every question is answered exactly once (a copy marked as possibly repeated is the
contract's answer to a reply whose request had left when the process died; never an unmarked second one), and a
marker sent afterwards is answered too."""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.intake.courier import ChannelTexts
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import FakeSlackAPI, SlackEventPoster, event_callback, message_event
from tests.support.slack import BOARD, NAMES, next_ts, slack_env, slack_poster, write_slack_config
from tests.support.telegram import eventually

pytestmark = pytest.mark.xdist_group("bursts")

BURST = 100
TAIL = 10  # posted after the kill, as Slack keeps sending to a process that died
USERS = [f"U0USER{n:02d}" for n in range(1, 9)]
MARK = ChannelTexts().possibly_repeated.split(":")[0]
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")


def copies(slack: FakeSlackAPI) -> tuple[Counter[str], Counter[str]]:
    """Per question: answers as first sent, and copies marked as possibly repeated."""
    plain: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    for text in slack.texts():
        for q in _ECHO.findall(text):
            (marked if MARK in text else plain)[q] += 1
    return plain, marked


def answered(slack: FakeSlackAPI) -> set[str]:
    plain, marked = copies(slack)
    return set(plain) | set(marked)


def sent_marks(db: Path) -> int:
    """Replies the daemon has recorded as sent (its durable mark)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM inbound_messages WHERE status = 'answered'").fetchone()[0])


async def test_sigkill_with_100_events_in_flight_then_slack_s_retries_lose_nothing_and_answer_nothing_twice(
        tmp_path: Path, echo_model: EchoModel) -> None:
    echo_model.latency = 0.3
    bodies = [event_callback(message_event(BOARD, USERS[i % len(USERS)], f"Q{i:03d} what do you think?", next_ts()))
              for i in range(BURST)]
    acked: list[dict[str, Any]] = []
    unacked: list[dict[str, Any]] = []
    async with FakeSlackAPI(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, echo_model, allowed=USERS)
        sabha = SabhaProcess(config, env=slack_env())
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            async with slack_poster(sabha) as poster:

                # Mid-burst whatever the machine's speed: the second half waits until some answers are recorded
                # as sent, the kill comes once that half has begun, and the last TAIL are posted only after it
                # (on a loaded machine a burst on a clock alone could be over before the first answer).
                second_half, killed = asyncio.Event(), asyncio.Event()

                async def one(i: int, body: dict[str, Any]) -> None:
                    if i >= BURST - TAIL:
                        await killed.wait()
                    elif i >= BURST // 2:
                        await second_half.wait()
                    await asyncio.sleep((i % (BURST // 2)) * 0.03)  # 3 s a half, several in flight at once
                    status, _ = await poster.post(body)
                    (acked if status == 200 else unacked).append(body)

                burst = asyncio.gather(*(one(i, b) for i, b in enumerate(bodies)))
                await eventually(lambda: len(acked) + len(unacked) >= BURST // 2, "half the burst posted", timeout=120)
                await eventually(lambda: sent_marks(db) >= 3, "some answers recorded as sent", timeout=120)
                second_half.set()
                await eventually(lambda: len(acked) + len(unacked) > BURST // 2, "the second half begun", timeout=120)
                await sabha.signal(signal.SIGKILL)
                killed.set()
                await burst
            assert unacked, "the kill came after the whole burst was acknowledged; not mid-burst"
            answered_before = len(answered(slack))
            await sabha.start()
            async with SlackEventPoster(f"http://127.0.0.1:{sabha.port}/slack/events") as poster:
                # Slack retries what it never got a 200 for, with X-Slack-Retry-Num 1, 2, 3.
                for attempt in (1, 2, 3):
                    left = list(unacked)
                    unacked.clear()
                    statuses = await asyncio.gather(*(poster.post(b, retry=attempt) for b in left))
                    unacked.extend(b for b, (s, _) in zip(left, statuses, strict=True) if s != 200)
                    if not unacked:
                        break
                assert not unacked, "every retry acknowledged after the restart"
                marker = event_callback(message_event(BOARD, USERS[0], "Q999 marker after the storm", next_ts()))
                assert await poster.deliver(marker)
            wanted = {f"Q{i:03d}" for i in range(BURST)} | {"Q999"}
            await eventually(lambda: wanted <= answered(slack), "every question and the marker answered",
                             timeout=180)
            await eventually(lambda: sent_marks(db) >= BURST + 1, "every answer recorded", timeout=60)
        finally:
            await sabha.close()
    plain, marked = copies(slack)
    lost = sorted(wanted - answered(slack))
    twice = sorted(q for q, n in plain.items() if n > 1)
    marked_second = sorted(q for q in marked if plain[q])
    print(f"\nslack events, SIGKILL mid-burst: {len(acked)} acknowledged before the kill, {answered_before} answered "
          f"before it; lost {len(lost)}, answered twice unmarked {len(twice)}, marked copies {sum(marked.values())} "
          f"({len(marked_second)} beside a first copy); Slack's retries logged "
          f"{sum('Slack' in line and 'retry' in line for line in sabha.lines)}")
    assert (lost, twice) == ([], [])
    assert all(n == 1 for n in marked.values()), "never a third copy"
