"""Inbound Telegram messages: who may talk to the board, and the Envelope a message becomes.

Access is deny-by-default (:class:`AccessGate`): a message is served only when its sender
is in ``telegram.allowed_user_ids`` and, in a group, the group is the board's forum
(``telegram.group_id``) or in ``telegram.allowed_chat_ids``. A denied user id is logged
once (so the owner can copy it into the config) and costs no model call.

:func:`to_envelope` keys topic routing on ``is_topic_message``: a topic message carries
its ``message_thread_id``; General (no thread id, or a reply chain's root id without
``is_topic_message``) and private chats carry none.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from telegram import Message

from board.envelope import Envelope

log = logging.getLogger("sabha.telegram.access")


@dataclass(frozen=True)
class Place:
    """Where a message was written: chat, forum topic (None = General / private), kind."""

    chat_id: int
    thread_id: int | None
    is_group: bool

    @property
    def lane(self) -> tuple[int, int | None]:
        """Messages of one lane are answered one at a time, in order."""
        return (self.chat_id, self.thread_id)


def place_of(message: Message) -> Place:
    """The place of a message (see the module docstring for the thread rule)."""
    chat = message.chat
    is_group = chat.type in ("group", "supergroup")
    thread = message.message_thread_id if is_group and message.is_topic_message else None
    return Place(chat_id=chat.id, thread_id=thread, is_group=is_group)


@dataclass
class AccessGate:
    """Deny by default; see the module docstring."""

    allowed_user_ids: tuple[int, ...] = ()
    allowed_chat_ids: tuple[int, ...] = ()
    denied_users: set[int] = field(default_factory=set)
    denied_chats: set[int] = field(default_factory=set)
    denied_count: int = 0

    @property
    def owner_id(self) -> int | None:
        """The owner: the first allowed user id."""
        return self.allowed_user_ids[0] if self.allowed_user_ids else None

    def allows(self, user_id: int | None, place: Place) -> bool:
        """Whether this sender may talk to the board here; logs each denied id once."""
        if user_id is None or user_id not in self.allowed_user_ids:
            self.denied_count += 1
            if user_id is not None and user_id not in self.denied_users:
                self.denied_users.add(user_id)
                log.warning(
                    "telegram: denied a message from user id %s in chat %s (not in telegram.allowed_user_ids; "
                    "add it there to let them talk to the board)", user_id, place.chat_id,
                )
            return False
        if place.is_group and place.chat_id not in self.allowed_chat_ids:
            self.denied_count += 1
            if place.chat_id not in self.denied_chats:
                self.denied_chats.add(place.chat_id)
                log.warning(
                    "telegram: denied messages in group %s (not telegram.group_id nor in telegram.allowed_chat_ids; "
                    "add it there to let the board answer in it)", place.chat_id,
                )
            return False
        return True


def to_envelope(message: Message, text: str, *, role_hint: str | None, owner_id: int | None) -> Envelope:
    """The board's view of a Telegram message."""
    place = place_of(message)
    user = message.from_user
    sender = str(user.id) if user else str(place.chat_id)
    name = (user.full_name or user.username) if user else None
    return Envelope(
        channel="telegram",
        text=text,
        sender=sender,
        chat_id=str(place.chat_id),
        thread_id=place.thread_id,
        message_id=str(message.message_id),
        sender_name=name,
        is_group=place.is_group,
        is_owner=user is not None and owner_id is not None and user.id == owner_id,
        role_hint=role_hint,
    )
