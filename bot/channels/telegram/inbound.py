"""Inbound Telegram updates: validated into typed records, gated, turned into Envelopes.

:func:`parse_update` validates a raw Update (a dict from ``getUpdates`` or a webhook body)
into :class:`TgUpdate` before anything is written: a field of the wrong type (``text: 7``,
``chat.id: "abc"``) makes the update invalid, logged and skipped, never a crash in a
worker. Fields older Bot API versions did not send (``is_bot``, ``file_unique_id``) are optional:
an update that carries a person's words is read whatever its age. Service messages (joins,
pins, topics created ..., even with an empty ``new_chat_members``) are not questions: skipped
with one info log line naming them (:attr:`TgMessage.service_keys`); other bots are ignored.
An edit (``edited_message``) is not answered as a question:
it is stored under its own id (:func:`edit_message_id`: the message id and the edit's
date) and gets one line saying edits are not read, quoting the edited message.

Access is deny-by-default (:class:`AccessGate`): a message is served only when its sender
is in ``telegram.allowed_user_ids`` and, in a group, the group is the board's forum
(``telegram.group_id``) or in ``telegram.allowed_chat_ids``. A denied id is logged once
(so the owner can copy it into the config) and costs no model call.

Topic routing keys on ``is_topic_message``: a topic message carries its
``message_thread_id``; General (no thread id, or a reply chain's root id without
``is_topic_message``) and private chats carry none.

A button press (``callback_query``, :class:`TgCallbackQuery`) is the presser sending the button's
command (:class:`board.envelope.Button`) in the place of the message that carried the button:
:func:`press_envelope` makes it an ordinary arrival, its message id ``<button message>:cb:<query id>``
(:func:`press_message_id`), so a redelivered press is a duplicate and the answer quotes the message
the button was on. The access gate and the owner-only checks treat it like a typed command.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from board.envelope import Envelope
from board.media.attachment import Attachment
from bot.channels.telegram.attachments import TgMedia

__all__ = ["UPDATES", "AccessGate", "Place", "TgCallbackQuery", "TgMessage", "TgUpdate", "edit_message_id",
           "parse_update", "press_envelope", "press_message_id", "quoted_message_id", "to_envelope"]

log = logging.getLogger("sabha.telegram.access")

#: The update kinds Sabha asks Telegram for (``allowed_updates`` of getUpdates and setWebhook).
UPDATES = ("message", "edited_message", "callback_query")

#: Keys that make a message a service message (no reply): Bot API "Message" fields.
SERVICE_KEYS = frozenset({
    "new_chat_members", "left_chat_member", "new_chat_title", "new_chat_photo", "delete_chat_photo",
    "group_chat_created", "supergroup_chat_created", "channel_chat_created", "message_auto_delete_timer_changed",
    "migrate_to_chat_id", "migrate_from_chat_id", "pinned_message", "forum_topic_created", "forum_topic_edited",
    "forum_topic_closed", "forum_topic_reopened", "general_forum_topic_hidden", "general_forum_topic_unhidden",
    "video_chat_started", "video_chat_ended", "video_chat_scheduled", "video_chat_participants_invited",
    "write_access_allowed", "users_shared", "chat_shared", "boost_added", "chat_background_set",
    "proximity_alert_triggered", "giveaway_created", "giveaway_completed",
})


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class TgUser(_Strict):
    """``User``: who wrote a message."""

    id: int
    is_bot: bool = False
    first_name: str = ""
    last_name: str | None = None
    username: str | None = None

    @property
    def full_name(self) -> str:
        """First and last name."""
        return " ".join(p for p in (self.first_name, self.last_name) if p)


class TgChat(_Strict):
    """``Chat``: where a message was written."""

    id: int
    type: str


class TgMessage(TgMedia):
    """The fields of ``Message`` Sabha reads, type-checked (the media fields: :class:`TgMedia`)."""

    message_id: int
    chat: TgChat
    from_user: TgUser | None = Field(None, alias="from")
    text: str | None = None
    caption: str | None = None
    message_thread_id: int | None = None
    is_topic_message: bool = False
    edit_date: int | None = None
    media_group_id: str | None = None  # an album's items share it (:mod:`.albums`)

    @property
    def is_service(self) -> bool:
        """A pin, a join, a topic created ...: not a question."""
        return bool(self.service_keys)

    @property
    def service_keys(self) -> list[str]:
        """The service fields this message has (present even when empty, e.g. ``new_chat_members: []``)."""
        return sorted(SERVICE_KEYS & set(self.model_extra or {}))

    @property
    def body(self) -> str | None:
        """The text to answer (a caption counts); None for a photo, sticker, voice note ..."""
        return self.text if self.text is not None else self.caption


class TgCallbackQuery(_Strict):
    """``CallbackQuery``: a press of an inline keyboard button under one of our messages. ``message``
    is that message (an ``InaccessibleMessage``, date 0, when it is too old to be shown; still with
    its chat and id), None for a button of an inline-mode message (Sabha sends none)."""

    id: str
    from_user: TgUser = Field(alias="from")
    message: TgMessage | None = None
    data: str | None = None
    chat_instance: str = ""


class TgUpdate(_Strict):
    """``Update``, with the kinds Sabha asks for (:data:`UPDATES`)."""

    update_id: int
    message: TgMessage | None = None
    edited_message: TgMessage | None = None
    callback_query: TgCallbackQuery | None = None


def edit_message_id(message: TgMessage) -> str:
    """The intake's id of an edit: ``<message id>:edit:<edit date>`` (each edit once; never the question's id)."""
    return f"{message.message_id}:edit:{message.edit_date or 0}"


def press_message_id(query: TgCallbackQuery) -> str:
    """The intake's id of a button press: ``<message with the button>:cb:<callback query id>`` (each
    press once; an answer to it quotes the message the button was on)."""
    carrier = query.message.message_id if query.message is not None else 0
    return f"{carrier}:cb:{query.id}"


def quoted_message_id(message_id: str | None) -> int | None:
    """The Telegram message an answer to ``message_id`` quotes (an edit's: the edited message)."""
    head = (message_id or "").partition(":")[0]
    return int(head) if head.lstrip("-").isdigit() else None


def parse_update(data: Any) -> TgUpdate:
    """Validate a raw update; raises ValueError saying what is wrong."""
    try:
        return TgUpdate.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
        raise ValueError(f"not a valid Telegram update ({problems})") from None


@dataclass(frozen=True)
class Place:
    """Where a message was written: chat, forum topic (None = General / private), kind."""

    chat_id: int
    thread_id: int | None
    is_group: bool

    @property
    def lane(self) -> str:
        """Messages of one lane are answered one at a time, in order."""
        return f"{self.chat_id}/{self.thread_id or '-'}"

    @classmethod
    def of(cls, message: TgMessage) -> Place:
        """The place of a message (see the module docstring for the thread rule)."""
        is_group = message.chat.type in ("group", "supergroup")
        thread = message.message_thread_id if is_group and message.is_topic_message else None
        return cls(chat_id=message.chat.id, thread_id=thread, is_group=is_group)

    @classmethod
    def of_envelope(cls, envelope: Envelope) -> Place:
        """The place an envelope came from (raises ValueError for a chat id that is not Telegram's)."""
        return cls(int(envelope.chat_id), envelope.thread_id, envelope.is_group)


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


def to_envelope(message: TgMessage, text: str, *, role_hint: str | None, owner_id: int | None,
                edited: bool = False, attachments: tuple[Attachment, ...] = ()) -> Envelope:
    """The board's view of a Telegram message (``edited``: of an edit of one); ``attachments``:
    what came besides the text (see :mod:`bot.channels.telegram.attachments`)."""
    place = Place.of(message)
    user = message.from_user
    return Envelope(
        channel="telegram",
        text=text,
        sender=str(user.id) if user else str(place.chat_id),
        chat_id=str(place.chat_id),
        thread_id=place.thread_id,
        message_id=edit_message_id(message) if edited else str(message.message_id),
        sender_name=(user.full_name or user.username) if user else None,
        is_group=place.is_group,
        is_owner=user is not None and owner_id is not None and user.id == owner_id,
        role_hint=role_hint,
        attachments=attachments,
    )


def press_envelope(query: TgCallbackQuery, *, role_hint: str | None, owner_id: int | None) -> Envelope | None:
    """The board's view of a button press: the presser sending the button's command where the button's
    message is; None when there is no such place (an inline-mode button) or no command."""
    if query.message is None or not (query.data or "").startswith("/"):
        return None
    place = Place.of(query.message)
    user = query.from_user
    return Envelope(
        channel="telegram",
        text=query.data or "",
        sender=str(user.id),
        chat_id=str(place.chat_id),
        thread_id=place.thread_id,
        message_id=press_message_id(query),
        sender_name=user.full_name or user.username,
        is_group=place.is_group,
        is_owner=owner_id is not None and user.id == owner_id,
        role_hint=role_hint,
    )
