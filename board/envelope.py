"""The records that cross the channel boundary: :class:`Envelope` in, :class:`Reply` out.

A channel (terminal, Telegram, WhatsApp) turns its native message into an Envelope;
the board answers with Replies that carry the same chat and thread so the channel can
deliver them to the place the question was asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from board.media.attachment import Attachment

if TYPE_CHECKING:
    from board.people.ref import PersonRef

__all__ = ["BUTTON_COMMAND_BYTES", "BUTTON_LABEL_CHARS", "MAX_BUTTONS", "Button", "Envelope", "Reply", "ReplyKind",
           "clean_text", "cleaned"]

ReplyKind = Literal["answer", "command", "error", "meeting", "progress"]


@dataclass(frozen=True)
class Envelope:
    """One inbound message, channel-agnostic.

    ``role_hint`` is the role the place implies (a forum topic mapped to a role);
    explicit addressing in the text (``@finance``) wins over it. ``is_owner`` grants the
    owner's scope (the owner's sessions, every meeting); only a channel that has verified
    the owner sets it, so a channel that forgets it grants nothing. ``is_public`` marks a
    stranger, admitted only because the channel is open to anyone (WhatsApp's public mode):
    every model call made for them is held to the channel's public terms
    (:mod:`board.spending.allowance`), and owner-only commands are refused to anyone not the owner.
    ``attachments`` are what came besides ``text`` (a voice note, a picture, a document; the
    text is then its caption), see :mod:`board.media`. ``person`` is set by the board (never by a
    channel) when the sender's account is linked to others (:mod:`board.people`).
    """

    channel: str
    text: str
    sender: str
    chat_id: str = "console"
    thread_id: int | None = None
    message_id: str | None = None
    sender_name: str | None = None
    is_group: bool = False
    is_owner: bool = False
    is_public: bool = False
    role_hint: str | None = None
    received_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    attachments: tuple[Attachment, ...] = ()  # what came besides text (references at receipt; read in the lane)
    person: PersonRef | None = None  # the linked person, once the board looked it up (board.people)


#: At most this many buttons under one reply (WhatsApp's interactive reply buttons allow three).
MAX_BUTTONS = 3
#: A button's label is at most this long (WhatsApp's reply-button title limit).
BUTTON_LABEL_CHARS = 20
#: A button's command is at most this many UTF-8 bytes (Telegram's ``callback_data`` limit).
BUTTON_COMMAND_BYTES = 64


@dataclass(frozen=True)
class Button:
    """One button under a reply. Pressing it is the same as the presser sending ``command``
    (``/ratify 12``, ``/done 3``): the channel turns the press into an ordinary command arrival
    through the intake, so dedupe, durability and the owner-only checks apply to it unchanged.
    """

    label: str  # what the button says, e.g. "Ratify"
    command: str  # the command a press sends, e.g. "/ratify m-20261125-ab12"

    def __post_init__(self) -> None:
        if not self.label.strip() or len(self.label) > BUTTON_LABEL_CHARS:
            raise ValueError(f"a button label is 1 to {BUTTON_LABEL_CHARS} characters: {self.label!r}")
        if not self.command.startswith("/") or len(self.command.encode()) > BUTTON_COMMAND_BYTES:
            raise ValueError(f"a button sends a /command of at most {BUTTON_COMMAND_BYTES} bytes: {self.command!r}")


@dataclass(frozen=True)
class Reply:
    """One outbound message from a role, addressed to where the envelope came from."""

    role: str
    name: str
    emoji: str
    text: str
    channel: str
    chat_id: str
    thread_id: int | None = None
    reply_to: str | None = None
    session_key: str | None = None
    kind: ReplyKind = "answer"
    degraded: bool = False
    voice: str | None = None  # the blob (sha256) of the answer spoken as an OGG/Opus voice note, sent after the text
    buttons: tuple[Button, ...] = ()  # shown under the text where the channel can (Telegram, WhatsApp)

    def __post_init__(self) -> None:
        if len(self.buttons) > MAX_BUTTONS:
            raise ValueError(f"at most {MAX_BUTTONS} buttons under one reply, not {len(self.buttons)}")

    @property
    def label(self) -> str:
        """``<emoji> <Name>``."""
        return f"{self.emoji} {self.name}".strip()

    def render(self) -> str:
        """The reply as printed in the terminal: ``<emoji> <Name>: <text>``."""
        return f"{self.label}: {self.text}"

    @classmethod
    def to(cls, envelope: Envelope, *, role: str, name: str, emoji: str, text: str, **extra: object) -> Reply:
        """A reply addressed to the chat and thread ``envelope`` came from."""
        return cls(
            role=role,
            name=name,
            emoji=emoji,
            text=text,
            channel=envelope.channel,
            chat_id=envelope.chat_id,
            thread_id=envelope.thread_id,
            reply_to=envelope.message_id,
            **extra,  # type: ignore[arg-type]
        )


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` as valid Unicode: each lone surrogate (undecodable bytes from a terminal or
    argv, or a ``\\ud800`` escape in a service's JSON; it cannot be stored) becomes one U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def cleaned(envelope: Envelope) -> Envelope:
    """``envelope`` with its text, sender name and every string of its attachments (a file name, a
    venue, a contact card, a MIME type: all from outside) made valid Unicode (see :func:`clean_text`)."""
    text = clean_text(envelope.text)
    name = clean_text(envelope.sender_name) if envelope.sender_name is not None else None
    attachments = tuple(_cleaned_attachment(a) for a in envelope.attachments)
    if text == envelope.text and name == envelope.sender_name and attachments == envelope.attachments:
        return envelope
    return replace(envelope, text=text, sender_name=name, attachments=attachments)


def _cleaned_attachment(attachment: Attachment) -> Attachment:
    changes: dict[str, Any] = {f: clean_text(v) for f in ("mime", "name", "sha256", "derived", "problem")
                               if isinstance(v := getattr(attachment, f), str) and _SURROGATE.search(v)}
    source = attachment.source
    if source is not None and (_SURROGATE.search(source.id) or _SURROGATE.search(source.unique_id or "")):
        changes["source"] = replace(source, id=clean_text(source.id),
                                    unique_id=clean_text(source.unique_id) if source.unique_id else None)
    return replace(attachment, **changes) if changes else attachment
