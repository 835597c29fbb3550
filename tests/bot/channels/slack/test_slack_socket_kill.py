"""Socket Mode durability on a real ``sabha run``: a hundred envelopes from several users over the socket, SIGKILL
while some are not yet acknowledged and some are answered, a restart (a new socket), and Slack's redelivery of
every envelope it saw no acknowledgement for (``retry_attempt`` 1; here every one sent before the kill, as if each
acknowledgement had been lost with the socket). Every question is answered exactly once (a
copy marked as possibly repeated is the contract's answer to a reply whose request had left when the process died;
never an unmarked second one), and a marker sent afterwards is answered too."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.bot.channels.slack.test_slack_durability import USERS, answered, copies, sent_marks
from tests.bot.channels.slack.test_slack_socket import SOCKET
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import event_callback, message_event
from tests.support.fakes.slack_socket import APP_TOKEN, FakeSlack
from tests.support.slack import BOARD, NAMES, next_ts, slack_env, write_slack_config
from tests.support.telegram import eventually

pytestmark = pytest.mark.xdist_group("bursts")

BURST = 100
TAIL = 10  # sent only after the kill: Slack keeps them for the next connection


async def test_sigkill_with_100_envelopes_in_flight_then_redelivery_loses_nothing_and_answers_nothing_twice(
        tmp_path: Path, echo_model: EchoModel) -> None:
    echo_model.latency = 0.3
    bodies = [event_callback(message_event(BOARD, USERS[i % len(USERS)], f"Q{i:03d} what do you think?", next_ts()))
              for i in range(BURST)]
    sent: dict[int, str] = {}  # body index -> envelope id, for those the socket took
    async with FakeSlack(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, echo_model, allowed=USERS, slack_extra=SOCKET)
        env = {**slack_env(), "SLACK_APP_TOKEN": APP_TOKEN}
        sabha = SabhaProcess(config, env=env)
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            await slack.socket.wait_connections(1)

            # Mid-burst whatever the machine's speed: the second half waits until some answers are recorded as
            # sent, the kill comes once that half has begun, and the last TAIL wait for the kill (on a loaded
            # machine a burst on a clock alone could be over before the first answer).
            second_half, killed = asyncio.Event(), asyncio.Event()

            async def burst() -> None:
                for i, body in enumerate(bodies):
                    if i == BURST // 2:
                        await second_half.wait()
                    if i == BURST - TAIL:
                        await killed.wait()
                    try:
                        sent[i] = await slack.socket.send("events_api", body)
                    except (RuntimeError, ConnectionError):
                        return  # the socket is gone: Slack keeps the rest for the next connection
                    await asyncio.sleep(0.03)

            sending = asyncio.create_task(burst())
            await eventually(lambda: len(sent) >= BURST // 2, "half the burst sent", timeout=120)
            await eventually(lambda: sent_marks(db) >= 3, "some answers recorded as sent", timeout=120)
            second_half.set()
            await eventually(lambda: len(sent) > BURST // 2, "the second half begun", timeout=120)
            await sabha.signal(signal.SIGKILL)
            await slack.socket.drop()
            killed.set()
            await sending
            unacked = [i for i, eid in sent.items() if not slack.socket.acks.get(eid)]
            never = [i for i in range(BURST) if i not in sent]
            assert unacked or never, "the kill came after the whole burst was acknowledged; not mid-burst"
            await sabha.start()
            await slack.socket.wait_connections(2)
            # Slack sends again what it saw no acknowledgement for; here every envelope sent before the kill, as if
            # each acknowledgement had been lost with the socket (stored ones must not be answered again)
            before = {eid: slack.socket.acks.get(eid, 0) for eid in sent.values()}
            for i in sorted(sent):
                await slack.socket.redeliver(sent[i])
            for i in never:
                sent[i] = await slack.socket.send("events_api", bodies[i])
            await eventually(lambda: all(slack.socket.acks.get(eid, 0) > before.get(eid, 0) for eid in sent.values()),
                             "every envelope acknowledged after the restart", timeout=180)
            marker = event_callback(message_event(BOARD, USERS[0], "Q999 marker after the storm", next_ts()))
            await slack.socket.wait_ack(await slack.socket.send("events_api", marker))
            wanted = {f"Q{i:03d}" for i in range(BURST)} | {"Q999"}
            await eventually(lambda: wanted <= answered(slack), "every question and the marker answered",
                             timeout=180)
            await eventually(lambda: sent_marks(db) >= BURST + 1, "every answer recorded", timeout=60)
        finally:
            await sabha.close()
    plain, marked = copies(slack)
    lost = sorted(wanted - answered(slack))
    twice = sorted(q for q, n in plain.items() if n > 1)
    print(f"\nslack socket mode, SIGKILL mid-burst: {len(unacked)} unacknowledged and {len(never)} never sent at the "
          f"kill; lost {len(lost)}, answered twice unmarked {len(twice)}, marked copies {sum(marked.values())}")
    assert (lost, twice) == ([], [])
    assert all(n == 1 for n in marked.values()), "never a third copy"


