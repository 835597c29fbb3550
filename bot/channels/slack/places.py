"""Where a Slack post is, for the board: which conversation, which role the place implies, where the answer goes.

A *conversation* is a thread in a channel, or a DM with the app:

- an advisor's channel (``slack.channels``: role -> channel id): every thread there is that advisor's;
- the board channel (``slack.board_channel``): the chair answers unless the words address an advisor
  (``@finance``, ``finance:``, a name; :mod:`board.routing`); the role a thread's first message addressed is
  remembered for the thread (:class:`.store.SlackThreadRoles`), so follow-ups there stay with it;
- a DM with the app (``channel_type: im``): like a private chat with the board.

The place's chat id is ``<channel>/<thread_ts>`` in a channel (a top-level post starts a thread: its own
``ts``), so a thread is one conversation, one lane and one session per role
(``board:<role>:g-<channel>_<thread_ts>``); in a DM it is the DM's channel id (the owner's DMs use the owner's
sessions, ``main`` / ``board:<role>``; anyone else's ``board:<role>:slack-<user>``), with ``/<thread_ts>``
when the post is in a thread of the DM (the answer goes there). Posts in any other channel are not the
board's: logged once per channel.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from bot.channels.slack.inbound import SlackMessage

__all__ = ["Placement", "SlackPlace", "SlackPlaceKind", "split_chat"]

log = logging.getLogger("sabha.slack")


class SlackPlaceKind(StrEnum):
    """What kind of place a conversation is in."""

    ADVISOR = "advisor"
    BOARD = "board"
    DM = "dm"


@dataclass(frozen=True)
class SlackPlace:
    """One conversation: its chat id (see the module docstring), the role the place implies, and where the
    answer goes (``channel``, ``thread_ts``)."""

    kind: SlackPlaceKind
    chat_id: str
    channel: str
    thread_ts: str | None
    role_hint: str | None = None

    @property
    def is_group(self) -> bool:
        """Others read the thread (a channel), so it is a group conversation."""
        return self.kind != SlackPlaceKind.DM


def split_chat(chat_id: str) -> tuple[str, str | None]:
    """A chat id as (channel, thread_ts): ``C1/1700000000.000100`` -> ``("C1", "1700000000.000100")``; a DM's
    or a user's id alone -> ``(id, None)`` (a user id posts to the app's DM with them)."""
    channel, _, thread = chat_id.partition("/")
    return channel, thread or None


class Placement:
    """The configured places (``slack.channels``, ``slack.board_channel``); see the module docstring."""

    def __init__(self, board_channel: str | None, channels: dict[str, str]) -> None:
        self.board_channel = board_channel
        self.roles = {channel: role for role, channel in channels.items()}
        self.ignored = 0
        self._logged: set[str] = set()

    def reconfigure(self, board_channel: str | None, channels: dict[str, str]) -> None:
        """New places from a re-read config."""
        self.board_channel = board_channel
        self.roles = {channel: role for role, channel in channels.items()}
        self._logged.clear()

    def place(self, message: SlackMessage) -> SlackPlace | None:
        """Where ``message`` is (None: a channel that is not the board's, logged once)."""
        thread = message.thread_ts or message.ts
        if message.is_dm:
            chat = f"{message.channel}/{message.thread_ts}" if message.thread_ts else message.channel
            return SlackPlace(SlackPlaceKind.DM, chat, message.channel, message.thread_ts)
        role = self.roles.get(message.channel)
        if role is not None:
            return SlackPlace(SlackPlaceKind.ADVISOR, f"{message.channel}/{thread}", message.channel, thread, role)
        if message.channel == self.board_channel:
            return SlackPlace(SlackPlaceKind.BOARD, f"{message.channel}/{thread}", message.channel, thread)
        self.ignored += 1
        if message.channel not in self._logged:
            self._logged.add(message.channel)
            log.info("slack: ignored a message in channel %s, which is neither slack.board_channel nor one of "
                     "slack.channels (the app was added there?); further ones there are not logged",
                     message.channel)
        return None
