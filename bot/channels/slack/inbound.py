"""What arrives from Slack's Events API: the signature check, and a request body read into typed records.

:func:`signature_problem` checks ``X-Slack-Signature`` over the raw body with slack_sdk's
:class:`~slack_sdk.signature.SignatureVerifier` (HMAC-SHA256 of ``v0:<timestamp>:<body>`` with the signing
secret; a timestamp more than five minutes from now is refused, so a captured request cannot be replayed).
:func:`parse_request` reads the JSON body: ``url_verification`` (the challenge to echo), ``event_callback``
(one event), or anything else (ignored). :func:`read_event` turns the event into a :class:`SlackMessage`
(a message for the board, an edit or a deletion) or an :class:`SlackIgnored` with the reason (a bot's or the app's
own message, a hidden or system subtype, an event type Sabha does not read). An ``app_mention`` and the
``message`` event of the same post carry the same channel and ``ts``: :attr:`SlackMessage.message_id` is that
pair, so the intake stores the post once whichever arrives first. :func:`retry_of` reads
``X-Slack-Retry-Num`` / ``X-Slack-Retry-Reason`` (a redelivery of a request Sabha did not acknowledge in time).
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from slack_sdk.signature import Clock, SignatureVerifier

__all__ = [
    "SlackEventKind",
    "SlackIgnored",
    "SlackMessage",
    "SlackRequest",
    "SlackRequestKind",
    "SlackRetry",
    "SlackSignatureProblem",
    "parse_request",
    "plain_text",
    "read_event",
    "retry_of",
    "signature_problem",
]

#: Subtypes of ``message`` that are a person's post (others are joins, topic changes, bots, hidden ones).
READ_SUBTYPES = frozenset({"", "file_share", "thread_broadcast", "me_message"})
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")


class SlackSignatureProblem(StrEnum):
    """Why a request's signature was refused."""

    MISSING = "missing"  # no X-Slack-Signature or X-Slack-Request-Timestamp
    STALE = "stale"  # the timestamp is more than five minutes from now (a replay, or a clock far off)
    WRONG = "wrong"  # does not match the signing secret


class _SignedAt(Clock):
    """A clock stopped at a request's own timestamp: a request stored when it arrived is not stale later."""

    def __init__(self, stamp: int) -> None:
        self.stamp = stamp

    def now(self) -> float:
        return float(self.stamp)


def signature_problem(verifier: SignatureVerifier, body: bytes, headers: Mapping[str, str],
                      clock: Clock | None = None, *, stored: bool = False) -> SlackSignatureProblem | None:
    """None when ``body`` is signed by Slack with this app's secret within the timestamp window. ``stored``: the
    request was stored when it arrived and is handed over now (:func:`bot.channels.webhook.stored_earlier`): its
    signature still counts, its age does not (it was judged at arrival)."""
    timestamp = headers.get("X-Slack-Request-Timestamp")
    signature = headers.get("X-Slack-Signature")
    if not timestamp or not signature:
        return SlackSignatureProblem.MISSING
    try:
        stamp = int(timestamp)
    except ValueError:
        return SlackSignatureProblem.WRONG
    if stored:
        clock = _SignedAt(stamp)
        verifier = SignatureVerifier(verifier.signing_secret, clock)
    if abs((clock or verifier.clock).now() - stamp) > 60 * 5:
        return SlackSignatureProblem.STALE
    valid = verifier.is_valid(body=body, timestamp=timestamp, signature=signature)
    return None if valid else SlackSignatureProblem.WRONG


@dataclass(frozen=True)
class SlackRetry:
    """Slack's note that a request is a redelivery: the try (1, 2, 3) and why (``http_timeout`` ...)."""

    number: int
    reason: str


def retry_of(headers: Mapping[str, str]) -> SlackRetry | None:
    """The redelivery headers of a request, if any."""
    number = headers.get("X-Slack-Retry-Num")
    if number is None:
        return None
    try:
        n = int(number)
    except ValueError:
        n = 1
    return SlackRetry(n, headers.get("X-Slack-Retry-Reason", "unknown"))


class SlackRequestKind(StrEnum):
    """What an Events API request is."""

    CHALLENGE = "url_verification"
    EVENT = "event_callback"
    OTHER = "other"  # app_rate_limited notices and the like: acknowledged and logged


@dataclass(frozen=True)
class SlackRequest:
    """One Events API request."""

    kind: SlackRequestKind
    type: str
    challenge: str = ""
    event_id: str = ""
    team_id: str = ""
    event: Mapping[str, Any] | None = None


def parse_request(body: bytes) -> SlackRequest:
    """The request ``body``; ValueError when it is not a JSON object Slack sends."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError("not an object with a type")
    kind = data["type"]
    if kind == SlackRequestKind.CHALLENGE.value:
        return SlackRequest(SlackRequestKind.CHALLENGE, kind, challenge=str(data.get("challenge", "")))
    if kind != SlackRequestKind.EVENT.value:
        return SlackRequest(SlackRequestKind.OTHER, kind)
    event = data.get("event")
    if not isinstance(event, dict):
        raise ValueError("an event_callback without an event object")
    return SlackRequest(SlackRequestKind.EVENT, kind, event_id=str(data.get("event_id", "")),
                       team_id=str(data.get("team_id", "")), event=event)


class SlackEventKind(StrEnum):
    """What a read event is for the board."""

    MESSAGE = "message"  # a person's post (or an app_mention): for the board
    EDIT = "edit"  # message_changed by a person, with a different text
    DELETE = "delete"  # message_deleted


@dataclass(frozen=True)
class SlackMessage:
    """A person's post (or its edit or deletion) in a channel, a private channel or a DM with the app."""

    kind: SlackEventKind
    channel: str
    channel_type: str  # channel, group, im, mpim ("" when Slack did not say: app_mention)
    user: str
    text: str
    ts: str  # the post's own timestamp: its id in the channel
    thread_ts: str | None  # the thread it is in (None: a top-level post)
    files: tuple[Mapping[str, Any], ...] = ()  # the ``files`` of a file_share (read by the media hook)

    @property
    def message_id(self) -> str:
        """``<channel>/<ts>``: one id for a post whichever event (message, app_mention) brought it."""
        return f"{self.channel}/{self.ts}"

    @property
    def is_dm(self) -> bool:
        """A direct message with the app."""
        return self.channel_type == "im" or self.channel.startswith("D")


@dataclass(frozen=True)
class SlackIgnored:
    """An event that is not for the board, and why (for the log)."""

    why: str
    quiet: bool = False  # a routine one (the app's own posts and edits): logged at debug only


def read_event(event: Mapping[str, Any], *, bot_user: str, bot_id: str) -> SlackMessage | SlackIgnored:
    """The board's view of one event; ``bot_user`` / ``bot_id`` are the app's own (``auth.test``)."""
    kind = str(event.get("type", ""))
    if kind not in ("message", "app_mention"):
        return SlackIgnored(f"a {kind or 'typeless'} event (not read)")
    subtype = str(event.get("subtype") or "")
    if subtype == "message_changed":
        return _edit(event, bot_user=bot_user, bot_id=bot_id)
    if subtype == "message_deleted":
        previous = event.get("previous_message") or {}
        return SlackMessage(SlackEventKind.DELETE, str(event.get("channel", "")), str(event.get("channel_type", "")),
                            str(previous.get("user", "")), "", str(event.get("deleted_ts", "")),
                            _thread(previous))
    own = event.get("bot_id") or event.get("user") == bot_user or (bot_id and event.get("bot_id") == bot_id)
    if own or subtype == "bot_message":
        return SlackIgnored("a bot's message", quiet=event.get("user") == bot_user or event.get("bot_id") == bot_id)
    if event.get("hidden") or subtype not in READ_SUBTYPES:
        return SlackIgnored(f"a {subtype or 'hidden'} message (not a person's post)", quiet=True)
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not isinstance(user, str) or not isinstance(channel, str) or not isinstance(ts, str) or not user:
        return SlackIgnored("a message without a user, channel or ts")
    files = tuple(f for f in event.get("files") or () if isinstance(f, dict))
    return SlackMessage(SlackEventKind.MESSAGE, channel, str(event.get("channel_type", "")), user,
                        plain_text(str(event.get("text") or ""), bot_user), ts, _thread(event), files)


def _edit(event: Mapping[str, Any], *, bot_user: str, bot_id: str) -> SlackMessage | SlackIgnored:
    new, old = event.get("message") or {}, event.get("previous_message") or {}
    if not isinstance(new, dict) or not isinstance(old, dict):
        return SlackIgnored("an edit without its message")
    if new.get("bot_id") or new.get("user") == bot_user or (bot_id and new.get("bot_id") == bot_id):
        return SlackIgnored("an edit of a bot's message", quiet=True)  # the app's own streamed answers among them
    if (new.get("text") or "") == (old.get("text") or ""):
        return SlackIgnored("a message_changed with the same text (a link preview, a reaction)", quiet=True)
    ts = new.get("ts") or old.get("ts") or ""  # bolt-python's recorded edit carries the post's ts only in the old one
    return SlackMessage(SlackEventKind.EDIT, str(event.get("channel", "")), str(event.get("channel_type", "")),
                        str(new.get("user") or old.get("user") or ""),
                        plain_text(str(new.get("text") or ""), bot_user), str(ts), _thread(new) or _thread(old))


def _thread(message: Mapping[str, Any]) -> str | None:
    thread = message.get("thread_ts")
    return thread if isinstance(thread, str) and thread else None


@functools.lru_cache(maxsize=8)
def _own_mention(bot_user: str) -> re.Pattern[str]:
    """The app's own mention at the start of a post, compiled once per app (not on every event)."""
    return re.compile(rf"^\s*<@{re.escape(bot_user)}(?:\|[^>]*)?>[\s,:]*")


def plain_text(text: str, bot_user: str = "") -> str:
    """A post's text as a person wrote it: the app's own mention at the start dropped (``<@U0APP> finance:
    hi`` is ``finance: hi``), other mentions as ``@U123``, links as their label (url), entities unescaped."""
    if bot_user:
        text = _own_mention(bot_user).sub("", text)
    text = _MENTION.sub(lambda m: f"@{m.group(1)}", text)
    text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(2) and m.group(2) != m.group(1)
                     else m.group(1), text)
    return html.unescape(text).strip()
