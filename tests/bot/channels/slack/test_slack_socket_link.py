"""The Socket Mode link (``bot.channels.slack.socket_mode``) on the official ``SocketModeClient`` against the
fake Socket Mode server: an envelope is acknowledged only once ``receive`` stored it; one it could not
store stays unacknowledged and Slack's redelivery (``retry_attempt`` 1) is acknowledged; after a dropped
socket or Slack's ``disconnect`` envelope the client reconnects and the next envelope arrives."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from bot.channels.slack.socket_mode import SocketAck, SocketDelivery, SocketKind, SocketLink
from tests.support.fakes.slack_socket import APP_TOKEN, FakeSlack, fixture
from tests.support.telegram import eventually


class Store:
    """What the channel's receive does, reduced to its answer: stored or not (a refusal is scripted)."""

    def __init__(self) -> None:
        self.seen: list[SocketDelivery] = []
        self.refuse = 0

    async def __call__(self, delivery: SocketDelivery) -> SocketAck | None:
        self.seen.append(delivery)
        if self.refuse:
            self.refuse -= 1
            return None
        return SocketAck()


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


@pytest.fixture
async def link(fake: FakeSlack) -> AsyncIterator[tuple[SocketLink, Store]]:
    store = Store()
    socket = SocketLink(app_token=APP_TOKEN, api_base_url=fake.api_base_url, receive=store, ping_interval=1,
                        down_grace_s=0)
    await socket.start()
    try:
        yield socket, store
    finally:
        await socket.stop()


def event_payload(n: int = 0) -> dict[str, object]:
    """python-slack-sdk's app_mention events_api payload, with its own event id."""
    payload = dict(fixture("socket_mode_envelopes.json")["envelopes"][1]["payload"])
    return {**payload, "event_id": f"Ev{n:03d}"}


async def test_an_envelope_is_acknowledged_after_it_is_stored(fake: FakeSlack,
                                                              link: tuple[SocketLink, Store]) -> None:
    _, store = link
    await fake.socket.wait_connections(1)
    for envelope in fixture("socket_mode_envelopes.json")["envelopes"]:
        await fake.socket.send(envelope["type"], envelope["payload"], envelope_id=envelope["envelope_id"])
        await fake.socket.wait_ack(envelope["envelope_id"])
    kinds = [d.kind for d in store.seen]
    # the shortcut (interactive) is stored too: the channel decides what it means
    assert kinds == [SocketKind.SLASH_COMMANDS, SocketKind.EVENTS_API, SocketKind.INTERACTIVE, SocketKind.EVENTS_API]
    assert store.seen[1].payload["event"]["type"] == "app_mention"
    assert [c.method for c in fake.calls] == ["apps.connections.open"]


async def test_an_unstored_envelope_is_left_for_slacks_retry(fake: FakeSlack,
                                                             link: tuple[SocketLink, Store]) -> None:
    socket, store = link
    await fake.socket.wait_connections(1)
    store.refuse = 1
    envelope_id = await fake.socket.send("events_api", event_payload(1))
    await eventually(lambda: len(store.seen) == 1 and socket.unacked == 1, "the refusal")
    assert fake.socket.acks.get(envelope_id, 0) == 0
    await fake.socket.redeliver(envelope_id)
    await fake.socket.wait_ack(envelope_id)
    assert [(d.envelope_id, d.retry_attempt, d.is_retry) for d in store.seen] == [
        (envelope_id, 0, False), (envelope_id, 1, True)]
    assert store.seen[1].retry_reason == "timeout"
    assert fake.socket.acks[envelope_id] == 1


@pytest.mark.parametrize("how", ["drop", "refresh"])
async def test_the_link_reconnects_and_readiness_says_when_it_is_down(
        fake: FakeSlack, link: tuple[SocketLink, Store], how: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "sabha.slack.socket")
    socket, store = link
    await fake.socket.wait_connections(1)
    await eventually(lambda: socket.connected, "the link up")
    assert socket.problem is None
    if how == "drop":
        await fake.stop()  # the network is gone: no new socket either
        await eventually(lambda: socket.problem is not None, "readiness saying the socket is down")
        assert "Socket Mode disconnected" in socket.problem
        await fake.restart()
    else:
        await fake.socket.refresh()
    await fake.socket.wait_connections(2)
    envelope_id = await fake.socket.send("events_api", event_payload(2))
    await fake.socket.wait_ack(envelope_id)
    await eventually(lambda: socket.connects == 2 and socket.problem is None, "the new session seen")
    assert [d.envelope_id for d in store.seen] == [envelope_id]
    said = caplog.text
    assert "Slack Socket Mode reconnected" in said
    if how == "refresh":
        assert "Slack asked Sabha to reconnect (refresh_requested)" in said
