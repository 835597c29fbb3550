"""What one Discord message is to the board: :class:`Incoming` (the facts of a gateway ``MESSAGE_CREATE`` or a
message read from a channel's history, as plain values) and :func:`place_of`, where it sits (:class:`Where`) or
why it is ignored (:class:`Ignored`).

Placement (``discord.channels`` / ``board_channel`` / ``forum_channel``; DMs always):

- a message in an advisor's text channel or the board channel starts a conversation: the answer goes into a
  thread started from that message, so the thread's id is the message's (:class:`Where.starts_thread`) and every
  later message in the thread is the same conversation; an advisor's channel addresses its role, the board
  channel whoever the words address (``@finance ...``, the chair otherwise; the thread keeps that advisor);
- a message in a thread under one of those channels, or in a post of the forum, continues that thread;
- a direct message is the user's conversation with the board, chat id ``dm-<user id>``;
- anything else (another server, a channel the board does not watch, a bot's message, the bot's own, a system
  message such as "pinned a message") is ignored: the channel logs a place once.

The session key follows from the chat id (:func:`board.conversation.sessions.session_key`): a thread is a group,
``board:<role>:g-<thread id>``; a DM is the owner's ``main`` / ``board:<role>``, anyone else's
``board:<role>:discord-<user id>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from board.media.attachment import Attachment
from bot.channels.discord.config import DM_PREFIX, DiscordSection
from bot.channels.discord.store import DiscordPlaceKind, Place

__all__ = ["Ignored", "Incoming", "Where", "place_of"]


@dataclass(frozen=True)
class Incoming:
    """One Discord message as plain values (see the module docstring)."""

    message_id: str
    channel_id: str
    author_id: str
    author_name: str
    content: str
    guild_id: str | None = None  # None: a direct message
    parent_id: str | None = None  # the channel of the thread it was written in, when known
    from_bot: bool = False  # a bot or a webhook wrote it
    system: bool = False  # not a user's message (a pin, a join, a thread's creation notice...)
    attachments: tuple[Attachment, ...] = ()  # its files, as references (read later, in the conversation's lane)


class Ignored(StrEnum):
    """Why a message is not the board's."""

    OWN = "the bot's own message"
    BOT = "a bot's or a webhook's message"
    SYSTEM = "a system message"
    GUILD = "a message in another server"
    CHANNEL = "a message in a channel the board does not watch (discord.channels, board_channel, forum_channel)"
    UNKNOWN_THREAD = "a message in a thread whose channel is not known"


@dataclass(frozen=True)
class Where:
    """Where a message sits: its conversation (``chat_id``), the role the place addresses, and the place rows to
    record (the thread a question starts, a thread or DM channel seen for the first time)."""

    chat_id: str
    role: str | None
    is_group: bool
    place: Place  # the place its channel is (recorded; its last message id is where history resumes)
    starts_thread: Place | None = None  # a question in a text channel: the thread its answer starts
    addressed_role_sticks: bool = False  # a new board or forum thread: the role its first words address sticks


def place_of(message: Incoming, settings: DiscordSection, known: Mapping[str, Place],
             bot_id: str | None) -> Where | Ignored:
    """Where ``message`` sits, or why it is ignored (see the module docstring); ``known``: the places seen."""
    if bot_id is not None and message.author_id == bot_id:
        return Ignored.OWN
    if message.from_bot:
        return Ignored.BOT
    if message.system:
        return Ignored.SYSTEM
    if message.guild_id is None:
        place = Place(message.channel_id, DiscordPlaceKind.DM, parent_id=message.author_id)
        return Where(f"{DM_PREFIX}{message.author_id}", None, False, place)
    if settings.guild_id is not None and message.guild_id != settings.guild_id:
        return Ignored.GUILD
    advisors = {channel: role for role, channel in settings.channels.items()}
    here = message.channel_id
    if here in advisors or here == settings.board_channel:
        kind = DiscordPlaceKind.ADVISOR if here in advisors else DiscordPlaceKind.BOARD
        role = advisors.get(here)
        thread = Place(message.message_id, DiscordPlaceKind.THREAD, parent_id=here, role=role, started=False)
        return Where(message.message_id, role, True, Place(here, kind, role=role), starts_thread=thread,
                     addressed_role_sticks=kind is DiscordPlaceKind.BOARD)
    seen = known.get(here)
    if seen is not None and seen.kind is DiscordPlaceKind.THREAD:
        return Where(here, seen.role, True, seen)
    parent = message.parent_id
    if parent is None:
        return Ignored.UNKNOWN_THREAD if seen is None else Ignored.CHANNEL
    if parent in advisors or parent in (settings.board_channel, settings.forum_channel):
        role = advisors.get(parent)
        thread = Place(here, DiscordPlaceKind.THREAD, parent_id=parent, role=role)
        return Where(here, role, True, thread, addressed_role_sticks=role is None)
    return Ignored.CHANNEL
