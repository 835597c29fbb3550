"""Button presses and ``/board``: Slack's interactivity and slash-command payloads -> commands through the intake.

Both come as signed form posts on ``slack.events_path`` (``payload=<json>`` for interactivity, the command's
fields for a slash command) or, in Socket Mode, as ``interactive`` / ``slash_commands`` envelopes; either way
:class:`SlackInteractions` turns them into an :class:`bot.intake.inbox.Arrival` stored by the intake (the
durable claim, dedupe, the owner-only checks) BEFORE Slack hears back (the 200, or the envelope's
acknowledgement); a store that failed is a 503 / no acknowledgement, so Slack's retry is answered once.

- **A press** (``block_actions`` on one of our buttons, :mod:`.blocks`) is the presser sending the button's
  command (``/ratify m-...``) in the conversation the pressed message is in (its thread). Only the owner's
  press of an owner-only command counts: a member's gets an ephemeral line ("only the board's owner ...") and
  nothing is stored or changed; a stranger's (not allowed) likewise. Once a press is stored, the pressed
  message is updated: its buttons become a line saying who pressed what; the outcome is the command's reply,
  posted in the thread like any answer (exactly once across kills, as every reply).
- **``/board <text>``** is a message to the board in that channel: ``/board status`` is ``/status`` (a
  command's name first), anything else plain words (``/board meeting on pricing``, ``/board @finance ...``).
  Slack shows nobody a slash command, so the question is posted: in a channel as a new message whose
  thread is the conversation (as a post's is; the answer goes into it), in a DM by the acknowledgement
  (``response_type: in_channel``). In a channel the command is recorded under its ``trigger_id`` before its echo is
  posted (:class:`.store.SlackBoardEchoes`): one that cannot be stored is not echoed (Slack hears it failed), and a
  repeated delivery of it reuses the echo and is stored once (its message id is ``<channel>/board-<trigger_id>``).
  ``/board @finance ...`` in the board channel makes the thread finance's, as a post naming finance does.

:func:`install` wires this, the Block Kit buttons, files and Socket Mode into a :class:`.channel.SlackChannel`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs

from aiohttp import web
from aiohttp.web import Request as WebRequest
from aiohttp.web import Response as WebResponse

from board.envelope import Envelope, Reply
from bot.channels.slack.blocks import ACTION_PREFIX, pressed_blocks, reply_blocks
from bot.channels.slack.config import SlackMode
from bot.channels.slack.files import SlackFiles
from bot.channels.slack.inbound import SlackEventKind, SlackMessage, parse_request
from bot.channels.slack.meeting import slack_meetings
from bot.channels.slack.places import SlackPlace, SlackPlaceKind
from bot.channels.slack.socket_mode import SocketAck, SocketDelivery, SocketKind, SocketLink
from bot.channels.slack.verdicts import SlackVerdicts
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import SendFailed
from bot.intake.inbox import Arrival, InboundKind
from bot.intake.intake import StorageUnavailable
from bot.intake.storage import is_storage_error

if TYPE_CHECKING:
    from board.media.attachment import Attachment
    from board.media.blobs import BlobSink
    from bot.channels.parts import ChannelParts
    from bot.channels.slack.access import SlackAccessPolicy
    from bot.channels.slack.config import SlackSection
    from bot.channels.slack.identity import SlackNames
    from bot.channels.slack.inbound import SlackRequest, SlackRetry
    from bot.channels.slack.outbound import SlackWeb
    from bot.channels.slack.places import Placement
    from bot.channels.slack.store import SlackBoardEchoes, SlackThreadRoles

__all__ = ["SlackHost", "SlackInteractions", "Taken", "install"]

log = logging.getLogger("sabha.slack.interactivity")

BOARD_COMMAND = "/board"
#: How long a stop waits for the ephemeral lines and pressed-message updates still on their way.
FOLLOW_UP_GRACE_S = 5.0
NOT_A_MEMBER = "Sorry, only the board's members can use its buttons and /board here."
NOT_THE_BOARDS = "This channel is not the board's: use /board in the board's channel, an advisor's channel or a DM " \
                 "with the app."
USAGE = "Write what you want from the board after /board, e.g. `/board meeting on pricing` or `/board status`."


class SlackHost(Protocol):
    """What this module uses of :class:`.channel.SlackChannel` (named so, not imported: the channel's ``build``
    imports this module)."""

    name: str
    settings: SlackSection
    texts: ChannelTexts
    accepting: bool
    uses: ChannelParts
    places: Placement
    access: SlackAccessPolicy
    thread_roles: SlackThreadRoles
    board_echoes: SlackBoardEchoes
    names: SlackNames
    web: SlackWeb
    blocks: Callable[[Reply, str], list[dict[str, Any]] | None] | None
    forms: Callable[[WebRequest, bytes], Awaitable[WebResponse]] | None
    receiver: Any
    attachments: Callable[[SlackMessage], tuple[Attachment, ...]] | None
    fetcher: Callable[[Attachment, BlobSink], Awaitable[None]] | None
    drains: Callable[[float], Awaitable[None]] | None
    posted: Callable[[str, str, str, Sequence[dict[str, Any]] | None], Awaitable[None]] | None

    def conversation(self, envelope: Envelope) -> str: ...

    async def claim(self, arrivals: list[Arrival]) -> None: ...

    async def take_event(self, parsed: SlackRequest, retry: SlackRetry | None = None) -> None: ...

    async def stick(self, envelope: Envelope) -> None: ...


@dataclass(frozen=True)
class Taken:
    """What came of one form post or envelope: ``stored`` False: not stored (no acknowledgement, Slack retries);
    ``answer``: the body of the acknowledgement (a slash command's visible echo, or its ephemeral refusal)."""

    stored: bool
    answer: Mapping[str, Any] | None = None


class SlackInteractions:
    """Presses and ``/board`` of one channel (see the module docstring)."""

    def __init__(self, channel: SlackHost) -> None:
        self.channel = channel
        self.presses = 0
        self.commands = 0
        self.refused = 0
        self.verdicts: SlackVerdicts | None = None  # the pressed message's update goes through it (install)
        self._echoing: dict[str, asyncio.Lock] = {}  # /board commands being echoed, by trigger_id
        self._later: set[asyncio.Task[None]] = set()

    # -- the two doors -----------------------------------------------------------------

    async def form(self, request: web.Request, body: bytes) -> web.Response:
        """A signed form post on ``slack.events_path`` (the channel's forms hook)."""
        fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        if not self.channel.accepting:
            return web.Response(status=503, text="not accepting right now")
        try:
            if "payload" in fields:
                payload = json.loads(fields["payload"])
                taken = await self.interactive(payload if isinstance(payload, dict) else {})
            elif "command" in fields:
                taken = await self.slash(fields)
            else:
                log.warning("slack: a signed form post that is neither interactivity nor a slash command; ignored")
                return web.Response(status=400, text="not an interactivity payload or a slash command")
        except json.JSONDecodeError:
            return web.Response(status=400, text="payload is not JSON")
        if not taken.stored:
            return web.Response(status=503, text="cannot store it right now; Slack will retry")
        return web.json_response(dict(taken.answer)) if taken.answer else web.Response(text="")

    async def socket(self, delivery: SocketDelivery) -> SocketAck | None:
        """A Socket Mode envelope (the link's receive): its acknowledgement, or None while it is not stored."""
        if not self.channel.accepting:
            return None
        payload = dict(delivery.payload)
        if delivery.kind is SocketKind.EVENTS_API:
            try:
                parsed = parse_request(json.dumps(payload).encode())
            except ValueError as exc:
                log.warning("slack: an events_api envelope that is not an Events API request (%s); acknowledged", exc)
                return SocketAck()
            retry = _retry(delivery)
            try:
                await self.channel.take_event(parsed, retry)
            except StorageUnavailable:
                return None
            return SocketAck()
        taken = await (self.interactive(payload) if delivery.kind is SocketKind.INTERACTIVE else self.slash(payload))
        return SocketAck(taken.answer) if taken.stored else None

    # -- presses -----------------------------------------------------------------------

    async def interactive(self, payload: Mapping[str, Any]) -> Taken:
        """An interactivity payload: a press of one of our buttons is stored; anything else is acknowledged."""
        if payload.get("type") != "block_actions":
            log.info("slack: an interactivity payload of type %s (nothing to do)", payload.get("type"))
            return Taken(True)
        press = _press(payload)
        if press is None:
            log.info("slack: a press on a button that is not the board's (nothing to do)")
            return Taken(True)
        user, command, label, message = press
        place = self.channel.places.place(message)
        if place is None:
            return Taken(True)
        refusal = self._refusal(user, command)
        if refusal is not None:
            self.refused += 1
            log.info("slack: %s pressed %s (%s): refused, nothing changed", user, label, command.split()[0])
            self._soon(self._ephemeral(message.channel, user, refusal, message.thread_ts))
            return Taken(True)
        action_ts = str((payload.get("actions") or [{}])[0].get("action_ts") or payload.get("trigger_id") or "")
        envelope = self._envelope(place, user, command, f"{message.message_id}/press-{action_ts}")
        try:
            await self.channel.claim([Arrival(envelope, self.channel.conversation(envelope), InboundKind.TEXT)])
        except StorageUnavailable:
            return Taken(False)
        self.presses += 1
        log.info("slack: %s pressed %s on %s: %s stored", user, label, message.message_id, command.split()[0])
        original = str((payload.get("message") or {}).get("text") or "")
        blocks = pressed_blocks(original, user, label)
        self._soon(self.verdicts.pressed(message.channel, message.ts, original or label, blocks)
                   if self.verdicts is not None else self.channel.web.update(message.channel, message.ts,
                                                                             original or label, None, blocks))
        return Taken(True)

    def _refusal(self, user: str, command: str) -> str | None:
        access = self.channel.access
        if not (access.listed(user) or access.is_public(user)):
            return NOT_A_MEMBER
        name = command.lstrip("/").split(maxsplit=1)[0].lower() if command.strip("/ ") else ""
        if name in self.channel.uses.commands.owner_only and not access.is_owner(user):
            return f"Only the board's owner can /{name}; nothing changed."
        return None

    # -- /board ------------------------------------------------------------------------

    async def slash(self, fields: Mapping[str, Any]) -> Taken:
        """A slash command's fields: ``/board <text>`` stored as a message in that channel."""
        command = str(fields.get("command") or "")
        user, channel = str(fields.get("user_id") or ""), str(fields.get("channel_id") or "")
        text = str(fields.get("text") or "").strip()
        if command != BOARD_COMMAND:
            return Taken(True, _ephemeral(f"Sabha knows {BOARD_COMMAND} only, not {command}."))
        if not text:
            return Taken(True, _ephemeral(USAGE))
        if not (self.channel.access.listed(user) or self.channel.access.is_public(user)):
            self.refused += 1
            return Taken(True, _ephemeral(NOT_A_MEMBER))
        place = self._command_place(channel, str(fields.get("channel_name") or ""))
        if place is None:
            return Taken(True, _ephemeral(NOT_THE_BOARDS))
        first = text.split(maxsplit=1)[0].lower()
        words = f"/{text}" if first in self.channel.uses.commands and not text.startswith("/") else text
        echo = f"<@{user}>: {BOARD_COMMAND} {text}"
        trigger = str(fields.get("trigger_id") or "")
        if place.kind is SlackPlaceKind.DM:
            message_id = f"{channel}/board-{trigger or fields.get('response_url') or ''}"
            answer: dict[str, Any] | None = {"response_type": "in_channel", "text": echo}
        else:  # in a channel the question starts a thread, as a post does, and the answer goes into it
            echoed = await self._echo(channel, user, echo, trigger)
            if isinstance(echoed, Taken):
                return echoed
            place = SlackPlace(place.kind, f"{channel}/{echoed}", channel, echoed, place.role_hint)
            message_id, answer = f"{channel}/board-{trigger}" if trigger else f"{channel}/{echoed}", None
        envelope = self._envelope(place, user, words, message_id)
        try:
            if place.kind is SlackPlaceKind.BOARD:  # `/board @finance ...` makes the thread finance's, as a post does
                await self.channel.stick(envelope)
            await self.channel.claim([Arrival(envelope, self.channel.conversation(envelope), InboundKind.TEXT)])
        except Exception as exc:
            if not isinstance(exc, StorageUnavailable) and not is_storage_error(exc):
                raise
            log.warning("slack: /board from %s in %s could not be stored (%s); Slack is told it failed", user, channel,
                        exc)
            return Taken(False)
        self.commands += 1
        log.info("slack: /board from %s in %s stored", user, channel)
        return Taken(True, answer)

    async def _echo(self, channel: str, user: str, echo: str, trigger: str) -> str | Taken:
        """The ts of the command's echo in ``channel``, whose thread is its conversation: posted once the command is
        recorded under its ``trigger_id`` (:class:`.store.SlackBoardEchoes`), or the one an earlier delivery of the
        same command posted (never a second echo). ``Taken(False)`` when the command could not be recorded: then
        nothing is posted and Slack hears it failed."""
        lock = self._echoing.setdefault(trigger, asyncio.Lock())  # a delivery of it while one is being echoed waits
        try:
            async with lock:
                return await self._echo_once(channel, user, echo, trigger)
        finally:
            if len(self._echoing) > 256:  # forget the locks nobody holds
                self._echoing = {k: v for k, v in self._echoing.items() if v.locked()}

    async def _echo_once(self, channel: str, user: str, echo: str, trigger: str) -> str | Taken:
        echoes = self.channel.board_echoes
        try:
            ts = await echoes.record(trigger, channel) if trigger else None
        except Exception as exc:
            if not is_storage_error(exc):
                raise
            log.warning("slack: /board from %s in %s could not be stored (%s); not echoed, Slack is told it failed",
                        user, channel, exc)
            return Taken(False)
        if ts is not None:
            log.info("slack: /board %s delivered again: its echo %s stands, the command is stored once", trigger, ts)
            return ts
        try:
            ts = await self.channel.web.post(channel, echo, None, None)
        except SendFailed as exc:
            log.warning("slack: /board from %s in %s: could not post the question (%s)", user, channel, exc)
            return Taken(True, _ephemeral(f"Sorry, I could not post in this channel ({exc}); is the app in it?"))
        if trigger:
            try:
                await echoes.posted(trigger, ts)
            except Exception as exc:
                if not is_storage_error(exc):
                    raise
                log.warning("slack: /board from %s in %s could not be stored (%s) after its echo %s was posted; Slack "
                            "is told it failed", user, channel, exc, ts)
                return Taken(False)
        return ts

    def _command_place(self, channel: str, channel_name: str) -> SlackPlace | None:
        """Where a slash command in ``channel`` is answered: the channel itself (no thread)."""
        places = self.channel.places
        if channel.startswith("D") or channel_name == "directmessage":
            return SlackPlace(SlackPlaceKind.DM, channel, channel, None)
        role = places.roles.get(channel)
        if role is not None:
            return SlackPlace(SlackPlaceKind.ADVISOR, channel, channel, None, role)
        if channel == places.board_channel:
            return SlackPlace(SlackPlaceKind.BOARD, channel, channel, None)
        return None

    # -- shared ------------------------------------------------------------------------

    def _envelope(self, place: SlackPlace, user: str, text: str, message_id: str) -> Envelope:
        access = self.channel.access
        role = place.role_hint or (self.channel.thread_roles.role_of(place.chat_id)
                                   if place.kind is SlackPlaceKind.BOARD else None)
        return Envelope(channel=self.channel.name, text=text, sender=user, chat_id=place.chat_id,
                        message_id=message_id, sender_name=self.channel.names.name(user), is_group=place.is_group,
                        is_owner=access.is_owner(user), is_public=access.is_public(user), role_hint=role)

    async def _ephemeral(self, channel: str, user: str, text: str, thread_ts: str | None) -> None:
        client = self.channel.web.client
        if client is None:
            return
        args: dict[str, Any] = {"channel": channel, "user": user, "text": text}
        if thread_ts:
            args["thread_ts"] = thread_ts
        await client.api_call("chat.postEphemeral", json=args)

    def _soon(self, work: Any) -> None:
        """Run ``work`` after the acknowledgement (a failure is logged: the stored command is what counts)."""
        async def run() -> None:
            try:
                await work
            except Exception as exc:  # noqa: BLE001 - cosmetic: the outcome is the command's reply
                log.warning("slack: a follow-up to a press or /board failed: %s: %s", type(exc).__name__, exc)

        task = asyncio.create_task(run(), name="slack-press-followup")
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def settle(self, grace: float = 5.0) -> None:
        """Wait (up to ``grace``) for the follow-ups in flight (stop)."""
        if self._later:
            await asyncio.wait(set(self._later), timeout=grace)


def _ephemeral(text: str) -> dict[str, Any]:
    return {"response_type": "ephemeral", "text": text}


def _retry(delivery: SocketDelivery) -> SlackRetry | None:
    from bot.channels.slack.inbound import SlackRetry

    return SlackRetry(delivery.retry_attempt, delivery.retry_reason or "timeout") if delivery.is_retry else None


def _press(payload: Mapping[str, Any]) -> tuple[str, str, str, SlackMessage] | None:
    """(presser, command, label, the pressed message as a post) of a press on one of our buttons."""
    actions = [a for a in payload.get("actions") or () if isinstance(a, dict)
               and str(a.get("action_id", "")).startswith(ACTION_PREFIX) and str(a.get("value", "")).startswith("/")]
    user = str((payload.get("user") or {}).get("id") or "")
    container = payload.get("container") or {}
    message = payload.get("message") or {}
    channel = str(container.get("channel_id") or (payload.get("channel") or {}).get("id") or "")
    ts = str(container.get("message_ts") or message.get("ts") or "")
    if not actions or not user or not channel or not ts:
        return None
    action = actions[0]
    label = str((action.get("text") or {}).get("text") or action["value"])
    thread = message.get("thread_ts")
    post = SlackMessage(SlackEventKind.MESSAGE, channel, "im" if channel.startswith("D") else "channel", user,
                        str(action["value"]), ts, str(thread) if thread and thread != ts else None)
    return user, str(action["value"]), label, post


def install(channel: SlackHost) -> SlackInteractions:
    """Give ``channel`` its buttons (Block Kit), its form posts (presses, ``/board``), files (:mod:`.files`), its
    meetings in a thread
    (:mod:`.meeting`) and, in Socket Mode, its socket (:mod:`.socket_mode`)."""
    interactions = SlackInteractions(channel)
    channel.blocks = reply_blocks
    channel.forms = interactions.form
    files = SlackFiles(channel.web)
    channel.attachments = files.attachments
    channel.fetcher = files.fetch
    verdicts = SlackVerdicts(channel.uses.db, channel.web, channel.uses.decisions)
    interactions.verdicts = verdicts
    channel.uses.decisions.subscribe(verdicts.changed)
    channel.posted = verdicts.posted
    verdicts.start()
    relay = slack_meetings(channel.name, channel.web, channel.uses, verdicts.posted, channel.texts)
    channel.uses.room.subscribe(relay)
    relay.start()

    async def drain(grace: float) -> None:  # at a stop: the meeting posts left, the presses' follow-ups
        await verdicts.stop()
        await asyncio.gather(relay.drain(grace), interactions.settle(min(grace, FOLLOW_UP_GRACE_S)))

    channel.drains = drain
    settings = channel.settings
    if settings.mode is SlackMode.SOCKET and settings.app_token is not None:
        channel.receiver = SocketLink(app_token=settings.app_token.get_secret_value(),
                                    api_base_url=settings.api_base_url, receive=interactions.socket,
                                    channel_name=channel.name)
    return interactions
