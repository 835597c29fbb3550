"""Typed channel capabilities (issue 37): what each real channel can do besides a courier's basics is
declared, resolved once when its intake is built, and read as typed fields (bot.intake.courier,
bot.channels.base). The sets below are each channel's behaviour as it was when the capabilities were
still found with getattr at the moment of use."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from board.app import Board
from board.envelope import Envelope, Reply
from bot.channels.base import ChannelCapabilities, FollowsLeader, Reconfigures, ServesWebhook
from bot.daemon import channel_parts
from bot.intake.courier import (
    Admission,
    Capabilities,
    Capability,
    ChannelTexts,
    ConfirmsDelivery,
    DecidesAtTurn,
    FetchesMedia,
    MayRedo,
    PostsNotice,
    ResolvesSender,
    ShowsInterruption,
    Streams,
    UniqueMessageIds,
)
from bot.intake.delivery import SendProgress

#: Each capability's declaration: the class a channel inherits to say it has it.
DECLARED: dict[Capability, type] = {
    Capability.UNIQUE_IDS: UniqueMessageIds, Capability.CONFIRMS: ConfirmsDelivery,
    Capability.SENDER: ResolvesSender, Capability.AT_TURN: DecidesAtTurn, Capability.NOTICE: PostsNotice,
    Capability.STREAM: Streams,
    Capability.REDO: MayRedo, Capability.INTERRUPTION: ShowsInterruption, Capability.MEDIA: FetchesMedia,
}

#: What each real channel did before (``getattr(courier, ...)`` in bot/intake/intake.py).
EXPECTED: dict[str, frozenset[Capability]] = {
    "discord": frozenset({Capability.UNIQUE_IDS, Capability.SENDER, Capability.STREAM, Capability.MEDIA}),
    "telegram": frozenset({Capability.STREAM, Capability.NOTICE, Capability.INTERRUPTION, Capability.REDO,
                           Capability.MEDIA}),
    # issue 44 (ack48): the sticky role is read and set as the turn begins, not inside the acknowledgement
    "whatsapp": frozenset({Capability.UNIQUE_IDS, Capability.CONFIRMS, Capability.SENDER, Capability.AT_TURN,
                           Capability.MEDIA}),
    "web": frozenset({Capability.STREAM, Capability.NOTICE, Capability.INTERRUPTION, Capability.REDO}),
    # issue 41: ids <channel>/<ts> are unique in a workspace; names looked up after the claim; answers streamed by
    # chat.update, the working notice made the draft, a draft marked when its answer will not come; files
    # through the channel's fetcher hook
    "slack": frozenset({Capability.UNIQUE_IDS, Capability.SENDER, Capability.STREAM, Capability.NOTICE,
                        Capability.INTERRUPTION, Capability.MEDIA}),
}

#: What each did for the daemon (``reconfigure`` in bot/ops/reload.py, ``leadership`` in bot/daemon.py,
#: ``settings.webhook_path`` in bot/channels/held/hold.py): (reconfigure, leader, webhook path).
EXPECTED_DAEMON: dict[str, tuple[bool, bool, str | None]] = {
    "discord": (True, False, None),
    "telegram": (True, True, "/telegram/webhook"),
    "whatsapp": (True, False, "/whatsapp/webhook"),
    "web": (False, False, None),
    "slack": (True, False, "/slack/events"),
}


def _discord(board: Board) -> Any:
    from bot.channels.discord.channel import DiscordChannel
    from bot.channels.discord.config import DiscordSection

    return DiscordChannel(channel_parts(board), DiscordSection.model_validate(
        {"token": "token", "application_id": "1", "api_base_url": "http://127.0.0.1:9/api/v10",
         "allowed_user_ids": ["2"]}))


def _telegram(board: Board) -> Any:
    from bot.channels.telegram.channel import TelegramChannel
    from bot.channels.telegram.config import TelegramSection

    return TelegramChannel(channel_parts(board), TelegramSection.model_validate(
        {"token": "123456:test-token", "api_base_url": "http://127.0.0.1:9/bot", "allowed_user_ids": [1]}))


def _whatsapp(board: Board) -> Any:
    from bot.channels.whatsapp.channel import WhatsAppChannel
    from bot.channels.whatsapp.config import WhatsAppSection

    return WhatsAppChannel(channel_parts(board), WhatsAppSection.model_validate(
        {"phone_number_id": "1555000", "access_token": "token", "app_secret": "secret", "verify_token": "verify",
         "graph_base_url": "http://127.0.0.1:9", "allowed_numbers": ["15550001111"]}))


def _web(board: Board) -> Any:
    from bot.channels.web.channel import WebChatChannel
    from bot.web.config import WebChatSection

    return WebChatChannel(channel_parts(board), WebChatSection())


def _slack(board: Board) -> Any:
    from bot.channels.slack.channel import SlackChannel
    from bot.channels.slack.config import SlackSection

    return SlackChannel(channel_parts(board), SlackSection.model_validate(
        {"bot_token": "xoxb-test", "signing_secret": "secret", "api_base_url": "http://127.0.0.1:9/api",
         "allowed_user_ids": ["U0OWNER"]}))


BUILDERS = {"discord": _discord, "telegram": _telegram, "whatsapp": _whatsapp, "web": _web, "slack": _slack}


@pytest.mark.parametrize("name", sorted(BUILDERS))
async def test_each_real_channel_resolves_the_capabilities_it_has(board: Board, name: str) -> None:
    channel = BUILDERS[name](board)
    caps = Capabilities.of(channel)
    assert caps.kinds() == EXPECTED[name]
    assert channel.intake.caps == caps, "the intake resolved them once, when it was built"
    assert channel.intake.inbox.ids_unique is caps.unique_ids and channel.intake.confirms is caps.confirms
    daemon = ChannelCapabilities.of(channel)
    path = daemon.webhook.webhook_path if daemon.webhook is not None else None
    assert (daemon.reconfigure is not None, daemon.leader is not None, path) == EXPECTED_DAEMON[name]


@pytest.mark.parametrize("name", sorted(BUILDERS))
async def test_each_capability_a_real_channel_has_is_declared_not_just_shaped_alike(board: Board,
                                                                                 name: str) -> None:
    """Found by its declaration: a channel that renames a declared method cannot be built (and mypy says so)."""
    channel = BUILDERS[name](board)
    mro = type(channel).__mro__
    undeclared = [kind for kind in Capabilities.of(channel).kinds() if DECLARED[kind] not in mro]
    daemon = ChannelCapabilities.of(channel)
    undeclared += [kind for kind, has in ((Reconfigures, daemon.reconfigure), (FollowsLeader, daemon.leader),
                                          (ServesWebhook, daemon.webhook)) if has is not None and kind not in mro]
    assert undeclared == []


class _Basic:
    """A courier with only the basics."""

    name = "basic"
    texts = ChannelTexts()

    def admit(self, envelope: Envelope) -> Admission:
        return Admission(True)

    def conversation(self, envelope: Envelope) -> str:
        return envelope.chat_id

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        yield

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        progress.posted += 1


def test_a_courier_with_only_the_basics_has_no_capability() -> None:
    assert Capabilities.of(_Basic()) == Capabilities()
    assert Capabilities.of(_Basic()).kinds() == frozenset()


def test_a_declared_capability_whose_method_is_missing_cannot_be_built() -> None:
    class Renamed(_Basic, MayRedo):
        async def may_redo_now(self, reply: Reply) -> bool:  # the capability's method renamed
            return True

    with pytest.raises(TypeError, match="may_redo"):
        Renamed()  # type: ignore[abstract]
