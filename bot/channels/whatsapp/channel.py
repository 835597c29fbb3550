"""The WhatsApp channel: Meta's webhooks in, the Graph API out, the shared intake between.

``GET webhook_path`` answers Meta's verification (the challenge when ``hub.verify_token``
matches, else 403). ``POST webhook_path`` takes a notification: the raw body (413 over
3 MB), its signature (401 missing, 403 wrong; nothing processed), its shape (400 with the
reason logged), then every item: messages become :class:`bot.intake.inbox.Arrival` records
stored by :meth:`bot.intake.intake.Intake.receive` (the durable claim; a redelivered
``wamid`` is a no-op), statuses are recorded per outbound message, errors are logged. Only
then is the answer 200 (503 when the state db cannot be written, so Meta delivers again);
the board works after that, in the intake's lanes.

A person is a conversation, whether a message names them by number or by business-scoped
user id (:mod:`.identity` keeps one key per person): the lane, the session keys
``board:<role>:wa-<person>`` and the sticky role (``@finance``, ``finance:``, ``/ask finance``,
``/finance``; ``/general`` goes back) are per person. A group is not a place Sabha answers unless
it is in ``whatsapp.allowed_groups`` (:class:`.places.GroupGate`; others are logged once per group
and cost nothing); an allowed group is one conversation (``board:<role>:wa-g-<group>``), answered
in the group, and its sender must still be admitted. Every message a person writes gets an
answer or a deliberate, logged silence (:func:`.inbound.disposition_of`): the board's answer,
the polite "text only" line, or the "edits are not read" line; a fixed line marks the message
read. Meetings called here are relayed by :class:`bot.channels.meeting_relay.MeetingRelay`.

Pictures, stickers, documents, audio and voice notes arrive as references (:mod:`.attachments`;
nothing is downloaded before the 200); the media service fetches them in the lane through
:meth:`WhatsAppChannel.fetch_media` (:mod:`.media`). A reply with a spoken version
(``Reply.voice``) is sent as text, then uploaded and sent as an audio message; a voice that
fails after the text is logged and never sends the text again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from board.commands.about import CHAIR_ADDRESSING, Addressing
from board.envelope import Button, Envelope, Reply
from board.media.attachment import Attachment
from board.media.blobs import BlobSink
from board.roles import GENERAL
from board.routing.router import Route, Router
from board.spending.allowance import MEETINGS_CLOSED, PublicTerms
from bot.channels.base import ChannelError, Reconfigures, ServesWebhook, repeating
from bot.channels.meeting_posts import MeetingPosts
from bot.channels.meeting_relay import MeetingRelay
from bot.channels.parts import ChannelParts
from bot.channels.receipt import received_request
from bot.channels.seen_once import SeenOnce
from bot.channels.webhook import BodyTooLarge, DeskVerdict, read_body
from bot.channels.whatsapp.access import CAP_REACHED, SCOPE, AccessPolicy
from bot.channels.whatsapp.config import WhatsAppSection
from bot.channels.whatsapp.format import headed, split_text, to_whatsapp, with_buttons
from bot.channels.whatsapp.identity import WhatsAppPeople, identity_news, listed_changes, sender_ids
from bot.channels.whatsapp.inbound import (
    Disposition,
    InboundMessage,
    ReportedError,
    SignatureProblem,
    StatusUpdate,
    WaError,
    parse_notification,
    read_items,
    signature_problem,
)
from bot.channels.whatsapp.limits import WINDOW_CLOSED
from bot.channels.whatsapp.media import WhatsAppMedia
from bot.channels.whatsapp.meeting import WHATSAPP_TEXT
from bot.channels.whatsapp.outbound import GraphClient, Pacing, Refused
from bot.channels.whatsapp.places import GroupGate, edit_message_id, quoted_wamid
from bot.channels.whatsapp.store import DeliveryStatus, DeliveryStore, RoleStore
from bot.intake.courier import (
    Admission,
    ChannelTexts,
    ConfirmsDelivery,
    DecidesAtTurn,
    FetchesMedia,
    ResolvesSender,
    UniqueMessageIds,
)
from bot.intake.delivery import SendFailed, SendProgress
from bot.intake.inbox import Arrival, InboundKind
from bot.intake.intake import Intake, IntakeHub, StorageUnavailable

if TYPE_CHECKING:
    from bot.config import LoadedConfig

__all__ = ["MAX_WEBHOOK_BYTES", "WhatsAppChannel", "build", "public_terms"]

log = logging.getLogger("sabha.whatsapp")

MAX_WEBHOOK_BYTES = 3 * 1024 * 1024
ROUTER_TTL_S = 1.0  # a soul added or renamed on disk is addressable within a second
TYPING_REFRESH_S = 20.0  # WhatsApp shows the indicator for up to 25 s
TEXTS = ChannelTexts(text_only="Thanks! I can only read text messages for now; please send your question as text.")
_KINDS = {Disposition.BOARD: InboundKind.TEXT, Disposition.TEXT_ONLY: InboundKind.UNSUPPORTED,
          Disposition.EDITED: InboundKind.EDITED}
#: The ``role_hint`` a message is stored with: its role is decided as its turn begins (:meth:`WhatsAppChannel.at_turn`),
#: in its conversation's order, not while Meta waits for the acknowledgement. Falsy: anything reading a stored
#: envelope without the channel (a fixed line said at receipt) sees no role, i.e. the chair.
ROLE_AT_TURN = ""
_STATUSES = {s.value: s for s in (DeliveryStatus.SENT, DeliveryStatus.DELIVERED, DeliveryStatus.READ,
                                  DeliveryStatus.FAILED)}


class WhatsAppChannel(UniqueMessageIds, ConfirmsDelivery, ResolvesSender, DecidesAtTurn, FetchesMedia,
                      Reconfigures[WhatsAppSection], ServesWebhook):
    """One business number; see the module docstring. Its message ids are unique (a wamid names one message
    whichever id of its sender filed it); each sent message gets status webhooks (``biz_opaque_callback_data``:
    the reply's key), so it confirms delivery."""

    name = "whatsapp"
    texts = TEXTS

    def __init__(self, parts: ChannelParts, settings: WhatsAppSection, *, hub: IntakeHub | None = None,
                 pacing: Pacing | None = None) -> None:
        if not settings.enabled or settings.app_secret is None or settings.verify_token is None:
            raise ChannelError("whatsapp.phone_number_id, access_token, app_secret and verify_token must be set "
                               "(see README, 'WhatsApp')")
        self.uses = parts  # what it uses of the board (bot.channels.parts)
        parts.commands.describe_channel(self.name, Addressing((
            ("<message>", "the chair (general) answers, or the role you switched to"),
            ("/<role>", "talk to that role until you switch, e.g. /finance; /general switches back"),
            *CHAIR_ADDRESSING.rows[1:])))
        self.settings = settings
        self.owns_hub = hub is None
        self.hub = hub or IntakeHub()
        self.graph = GraphClient(settings, pacing)
        self.media = WhatsAppMedia(self.graph, settings)
        self.people = WhatsAppPeople(parts.db, self._merge_people)
        self.access = AccessPolicy(settings, parts.db, ids=self.people.identifiers,
                                   closed=lambda usd: parts.spend.closed("public", SCOPE, usd))
        self.groups = GroupGate(settings.allowed_groups)
        parts.money.set_public_terms(public_terms(settings))
        self.roles = RoleStore(parts.db)
        self.deliveries = DeliveryStore(parts.db)
        self.meetings = MeetingRelay(self.name, self._send_meeting_text, WHATSAPP_TEXT, room=parts.room,
                                     record=MeetingPosts(parts.db, self.name),
                                     label_for=lambda role: parts.souls.profile(role).label, texts=self.texts)
        self.intake: Intake = hub.intake(parts.intake, self) if hub is not None else self.hub.intake(parts.intake, self)
        self._secret = settings.app_secret.get_secret_value().encode()
        self._verify = settings.verify_token.get_secret_value()
        self.state = "created"
        self.accepting = False
        self.started_at: float | None = None
        self.counts = {"bad_signature": 0, "invalid": 0, "skipped": 0, "statuses": 0, "errors": 0, "ignored": 0,
                       "undeliverable": 0}
        self.undeliverable: list[str] = []  # recent lines for `sabha status`
        self._logged = SeenOnce()  # (wamid, what) logged already: a redelivered webhook is not logged again
        self._router_cache: tuple[float, Router] | None = None

    def reconfigure(self, section: WhatsAppSection) -> None:
        """Apply what may change while running (a config reload, SIGHUP): the access mode, the
        allowlist, the public limits and whether strangers may convene meetings. The rest needs a restart."""
        access = self.access
        access.mode = section.access
        access.allowed = set(section.allowed_numbers)
        access.owner = section.allowed_numbers[0] if section.allowed_numbers else None
        access.rate = section.public_rate_per_minute
        access.daily_usd = section.public_daily_usd
        access._logged.clear()  # a newly ignored number is logged again
        self.groups.reconfigure(section.allowed_groups)
        self.settings = self.settings.model_copy(update={
            "access": section.access, "allowed_numbers": list(section.allowed_numbers),
            "allowed_groups": list(section.allowed_groups),
            "public_rate_per_minute": section.public_rate_per_minute, "public_daily_usd": section.public_daily_usd,
            "public_meetings": section.public_meetings})
        self.uses.money.set_public_terms(public_terms(self.settings))

    # -- what the intake needs (bot.intake.courier.Courier) -----------------------------

    def admit(self, envelope: Envelope) -> Admission:
        """Allowlist or public mode (:class:`.access.AccessPolicy`), for the sender (also in a group)."""
        return self.access.admit(envelope.sender)

    def current(self, envelope: Envelope) -> Envelope:
        """``envelope`` as the board should answer it now: a message stored under an id that has
        since been merged into a person (:mod:`.identity`) is that person's, so it continues their
        conversation and the answer goes to their current address."""
        if envelope.is_group:
            return envelope
        person = self.people.current(envelope.chat_id)
        if person == envelope.chat_id:
            return envelope
        role = ROLE_AT_TURN if envelope.role_hint == ROLE_AT_TURN else self.roles.role_of(person)
        return dataclasses.replace(envelope, sender=person, chat_id=person, role_hint=role,
                                   is_owner=self.access.is_owner(person), is_public=self.access.is_public(person))

    async def at_turn(self, envelope: Envelope, for_board: bool) -> Envelope:
        """The role ``envelope`` is answered by: the user's (or the group's) sticky role as its turn begins, after
        every earlier message of the conversation was taken in order (a message addressing a role, ``@finance`` or
        ``/finance``, makes that role sticky for the next ones: :meth:`_stick`). Decided here, in the
        conversation's lane, rather than while Meta waits for the webhook's answer: the same role whenever the turn
        comes (a message stored by an older Sabha, whose role was decided at receipt, keeps it)."""
        if envelope.role_hint != ROLE_AT_TURN:
            return envelope
        envelope = dataclasses.replace(envelope, role_hint=self.roles.role_of(envelope.chat_id))
        if for_board and (self.access.listed(envelope.sender) or self.access.mode.value == "public"):
            await self._stick(envelope)
        return envelope

    def conversation(self, envelope: Envelope) -> str:
        """One user (or one allowed group) is one conversation."""
        return f"wa:{envelope.chat_id}"

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        """The message marked read with a typing indicator, renewed while the turn runs."""
        wamid = quoted_wamid(envelope.message_id or "")
        if not wamid:
            yield
            return

        async with repeating(lambda: self.graph.mark_read(wamid), TYPING_REFRESH_S, "whatsapp typing"):
            yield

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        """Send ``reply`` to the user (or group) it answers, quoting their message, split at 4096
        characters. A fixed line (the polite "text only" line, the edit notice) marks the message
        read first, as an answer's typing indicator does. A spoken version (``reply.voice``) follows
        the text as an audio message (:meth:`_send_voice`). A copy sent once more (``progress.skip``) starts
        after the parts Meta confirmed, its first message headed by ``progress.heading``."""
        reply_to = quoted_wamid(reply.reply_to) if reply.reply_to else None
        if reply.kind == "error" and reply_to:
            await self.graph.mark_read(reply_to, typing=False)
        body = to_whatsapp(reply.text)
        if reply.name and reply.kind in ("answer", "meeting", "command"):
            body = f"*{reply.label}*\n{body}"
        pieces, button_body = with_buttons(split_text(body) or ["(empty answer)"], reply.buttons)
        parts = len(pieces) + (button_body is not None)
        skip = progress.skip  # a copy sent once more: the parts confirmed before are not repeated
        for i, piece in enumerate(pieces[skip:], start=skip):
            progress.part = f"{i + 1}/{parts}" if parts > 1 else ""  # Meta's status of the last part confirms it
            texts = headed(piece, progress.heading) if skip and i == skip and progress.heading else [piece]
            for n, text in enumerate(texts):
                await self._send(reply.chat_id, text, reply_to if i == skip and n == 0 else None, progress)
            await progress.part_done(i + 1, parts)  # stored when more follow: a stop then resends after it
        if button_body is not None:  # the reply's buttons, under its last part (or a short line of their own)
            progress.part = f"{parts}/{parts}" if parts > 1 else ""
            if skip and skip >= len(pieces) and progress.heading:  # only the buttons' message was left
                await self._send(reply.chat_id, progress.heading, reply_to, progress)
            await self._send(reply.chat_id, button_body, None if pieces else reply_to, progress, reply.buttons)
            await progress.part_done(parts, parts)
        if reply.voice:
            await self._send_voice(reply, reply_to)

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """The media service's download (:class:`board.media.understand.MediaFetcher`), see :mod:`.media`."""
        await self.media.fetch(attachment, sink)

    async def _send_voice(self, reply: Reply, reply_to: str | None) -> None:
        """The spoken answer after its text: a failure is logged; the text, already sent, counts."""
        user = self.people.address(reply.chat_id)
        try:
            data = self.uses.media.blobs.read(reply.voice or "")
            wamid = await self.media.send_voice(user, data, reply_to=reply_to)
        except (OSError, ValueError, RuntimeError, TimeoutError, aiohttp.ClientError, SendFailed) as exc:
            log.warning("whatsapp: the spoken reply to %s was not sent (the text was): %s", user, exc)
            return
        if wamid:
            with contextlib.suppress(Exception):
                await self.deliveries.accepted(wamid, user, reply_to)

    async def _send(self, person: str, body: str, reply_to: str | None, progress: SendProgress,
                    buttons: tuple[Button, ...] = ()) -> None:
        user = self.people.address(person)  # the current number, else the business-scoped id
        try:
            if buttons:
                wamid = await self.graph.send_buttons(user, body, buttons, reply_to=reply_to, progress=progress)
            else:
                wamid = await self.graph.send_text(user, body, reply_to=reply_to, progress=progress)
        except Refused as exc:
            closed = exc.error.code == WINDOW_CLOSED
            status = DeliveryStatus.UNDELIVERABLE if closed else DeliveryStatus.FAILED
            with contextlib.suppress(Exception):
                await self.deliveries.refused(user, reply_to, status, exc.error.code, exc.error.title)
            if closed:
                self._undeliverable(user, reply_to, exc.error.title)
            raise
        if wamid:
            await self.deliveries.accepted(wamid, user, reply_to)

    async def _send_meeting_text(self, user: str, body: str, reply_to: str | None,
                                 buttons: tuple[Button, ...] = (), progress: SendProgress | None = None) -> None:
        await self._send(user, body, reply_to, progress or SendProgress(), buttons)

    def _undeliverable(self, user: str, reply_to: str | None, why: str) -> None:
        self.counts["undeliverable"] += 1
        line = (f"reply to {user} (message {reply_to or '?'}) undeliverable: the 24-hour window had closed "
                f"({why}); they must write first")
        self.undeliverable = [line, *self.undeliverable][:5]
        log.error("whatsapp: %s. Meta accepts only template messages after 24 h of silence; the reply is "
                  "recorded as undeliverable (`sabha whatsapp undeliverable` lists them)", line)

    # -- webhook -----------------------------------------------------------------------

    @property
    def webhook_path(self) -> str:
        """``whatsapp.webhook_path``."""
        return self.settings.webhook_path

    def routes(self) -> list[web.RouteDef]:
        """Verification (GET) and notifications (POST) on ``whatsapp.webhook_path``."""
        path = self.settings.webhook_path
        return [web.get(path, self._verify_webhook), web.post(path, self._webhook)]

    async def _verify_webhook(self, request: web.Request) -> web.Response:
        q = request.query
        token = q.get("hub.verify_token", "")
        if q.get("hub.mode") == "subscribe" and hmac.compare_digest(token.encode(), self._verify.encode()):
            log.info("whatsapp: Meta verified the webhook %s", self.settings.webhook_path)
            return web.Response(text=q.get("hub.challenge", ""), content_type="text/plain")
        log.warning("whatsapp: refused a webhook verification from %s (mode %r, wrong or missing verify token)",
                    request.remote, q.get("hub.mode"))
        return web.Response(status=403, text="verification failed")

    def front_desk(self, headers: Mapping[str, str], body: bytes) -> DeskVerdict:
        """On the front desk (:mod:`bot.channels.held.desk`): a notification signed with ``whatsapp.app_secret`` is
        stored, then acknowledged; a missing or wrong signature is refused (401 / 403) as :meth:`_take` does."""
        problem = signature_problem(body, headers.get("X-Hub-Signature-256"), self._secret)
        if problem is None:
            return DeskVerdict()
        return DeskVerdict(401 if problem is SignatureProblem.MISSING else 403, f"signature {problem.value}")

    def webhook_senders(self, body: bytes) -> frozenset[str] | None:
        """The numbers a stored notification's messages are from and its statuses are for; None when it has
        none or is not a notification."""
        try:
            payload = json.loads(body)
            values = [change.get("value") or {} for entry in payload.get("entry") or []
                      for change in entry.get("changes") or []]
            who = {str(m["from"]) for v in values for m in v.get("messages") or [] if m.get("from")}
            who |= {str(st["recipient_id"]) for v in values for st in v.get("statuses") or [] if st.get("recipient_id")}
        except (ValueError, AttributeError, TypeError, KeyError):
            return None
        return frozenset(f"wa:{number}" for number in who) or None

    async def _webhook(self, request: web.Request) -> web.Response:
        with self.hub.receiving():  # acknowledging a notification comes before starting answers
            return await received_request(self.name, request, self._take)

    async def _take(self, request: web.Request) -> web.Response:
        try:
            body = await read_body(request, MAX_WEBHOOK_BYTES)
        except BodyTooLarge as exc:
            log.warning("whatsapp webhook: %s", exc)
            return web.Response(status=413, text="body too large")
        problem = signature_problem(body, request.headers.get("X-Hub-Signature-256"), self._secret)
        if problem is not None:
            self.counts["bad_signature"] += 1
            log.warning("whatsapp webhook: refused a request from %s: %s X-Hub-Signature-256 (check "
                        "whatsapp.app_secret)", request.remote, problem.value)
            status = 401 if problem is SignatureProblem.MISSING else 403
            return web.Response(status=status, text=f"signature {problem.value}")
        if not self.accepting:
            return web.Response(status=503, text="not accepting notifications right now")
        try:
            note = parse_notification(body)
        except ValueError as exc:
            self.counts["invalid"] += 1
            log.warning("whatsapp webhook: rejected a body that is not a valid notification: %s", exc)
            return web.Response(status=400, text="not a valid WhatsApp notification")
        for why in note.skipped:  # the rest of the batch is read, stored and answered
            self.counts["skipped"] += 1
            log.warning("whatsapp webhook: skipped an item that is not a valid message, status or error: %s", why)
        arrivals: list[Arrival] = []
        try:
            missed = await self.people.learn(identity_news(note))  # pairings and number / user id changes first
            for item in read_items(note):
                if isinstance(item, InboundMessage):
                    arrival = await self._arrival(item)
                    if arrival is not None:
                        arrivals.append(arrival)
                elif isinstance(item, StatusUpdate):
                    await self._status(item)
                elif isinstance(item, ReportedError):
                    self.counts["errors"] += 1
                    log.warning("whatsapp: Meta reported %s", _describe(item.error))
            await self.access.refresh()
            if arrivals:
                await self.intake.receive(arrivals)  # the durable claim (group commit)
            if missed is not None:
                raise missed  # an identity change not recorded: refused, so Meta delivers it again
        except StorageUnavailable:
            return web.Response(status=503, text="cannot store the notification right now; retry later")
        except Exception as exc:
            from bot.intake.storage import is_storage_error

            if not is_storage_error(exc):
                raise
            self.hub.storage.failed(exc, "recording a WhatsApp notification (statuses, who is who)")
            return web.Response(status=503, text="cannot store the notification right now; retry later")
        return web.Response(text="ok")

    async def _arrival(self, item: InboundMessage) -> Arrival | None:
        if item.phone_number_id is not None and item.phone_number_id != self.settings.phone_number_id:
            self.counts["ignored"] += 1
            if self._logged.first(item.wamid, "another number"):
                log.info("whatsapp: ignored message %s for another number (%s)", item.wamid, item.phone_number_id)
            return None
        if item.user is None:
            self.counts["ignored"] += 1
            log.warning("whatsapp: message %s names no sender (no from, wa_id or user id); ignored", item.wamid)
            return None
        if item.errors and self._logged.first(item.wamid, "errors"):
            log.info("whatsapp: message %s from %s came with %s", item.wamid, item.user,
                     "; ".join(_describe(e) for e in item.errors))
        if item.group_id is not None and not self.groups.admits(item.group_id, item.wamid):
            return None
        if item.disposition is Disposition.LOG:
            self.counts["ignored"] += 1
            if self._logged.first(item.wamid, "no reply"):
                log.info("whatsapp: %s message %s from %s: no reply%s", item.kind, item.wamid, item.user,
                         f" ({item.detail})" if item.detail else "")
            return None
        phone, bsuid = sender_ids(item.user, item.bsuid)
        if phone is None and bsuid is None:
            self.counts["ignored"] += 1
            log.warning("whatsapp: message %s names its sender by %r, neither a phone number nor a user id; ignored",
                        item.wamid, item.user)
            return None
        user = await self.people.person_for(phone, bsuid)
        text = item.text or ""
        place = item.group_id or user  # a group is one conversation; its sender is still who is admitted
        message_id = edit_message_id(item.wamid, item.quoted) if item.disposition is Disposition.EDITED \
            else item.wamid
        envelope = Envelope(channel=self.name, text=text, sender=user, chat_id=place, message_id=message_id,
                            sender_name=item.name, is_group=item.group_id is not None,
                            # in a group everyone there reads the answer: the owner speaks as a member
                            # (no owner-only command shows the board's numbers and spend to the group)
                            is_owner=self.access.is_owner(user) and item.group_id is None,
                            is_public=self.access.is_public(user), role_hint=ROLE_AT_TURN,  # see at_turn
                            attachments=item.attachments)
        return Arrival(envelope, self.conversation(envelope), _KINDS[item.disposition])

    async def _stick(self, envelope: Envelope) -> None:
        """Remember the role this message addresses: it answers the user's next messages too."""
        router = self._router()
        route = router.route(envelope)
        role = None
        if route.kind == "chat" and not route.error:
            role = route.role
        elif route.kind == "command" and route.command in router.roles and not route.text:
            role = route.command
        if role is not None and role != (envelope.role_hint or GENERAL):
            await self.roles.set(envelope.chat_id, role)  # the user's, or the group's

    def _router(self) -> Router:
        """The board's router, rebuilt at most once a second (building one reads every soul)."""
        now = time.monotonic()
        if self._router_cache is None or now - self._router_cache[0] >= ROUTER_TTL_S:
            self._router_cache = (now, self.uses.router())
        return self._router_cache[1]

    async def _status(self, item: StatusUpdate) -> None:
        self.counts["statuses"] += 1
        status = _STATUSES.get(item.status)
        if status is None:
            log.info("whatsapp: status %r for %s (not recorded)", item.status, item.wamid)
            return
        code = item.errors[0].code if item.errors else None
        title = item.errors[0].title if item.errors else None
        if status is DeliveryStatus.FAILED:
            if code == WINDOW_CLOSED:
                status = DeliveryStatus.UNDELIVERABLE
            await self._failed(item, status, title)
        else:  # sent, delivered, read: a reply that may have arrived did (it is not sent again)
            await self.intake.confirmed(item.callback, item.status)
        await self.deliveries.status(item.wamid, status, item.recipient, code, title)

    async def _merge_people(self, old: str, new: str) -> None:
        """``old`` and ``new`` are one person (:mod:`.identity`): ``old``'s sessions, sticky role and
        facts move to ``new`` (where both had a live session, ``new``'s continues; nothing is deleted)."""
        from board.conversation.sessions import role_of_key, session_key

        for key in await self.uses.sessions.keys():
            try:
                role = role_of_key(key)
            except ValueError:
                continue
            if key == session_key(role, is_owner=False, channel=self.name, user_id=old):
                await self.uses.sessions.merge(key, session_key(role, is_owner=False, channel=self.name,
                                                                 user_id=new))
        sticky = self.roles.role_of(old)
        if sticky is not None and self.roles.role_of(new) is None:
            await self.roles.set(new, sticky)
        await self.uses.facts.move_user(f"{self.name}:{old}", f"{self.name}:{new}")
        await self.uses.people.renamed(f"{self.name}:{old}", f"{self.name}:{new}")  # a link follows the merge

    async def _failed(self, item: StatusUpdate, status: DeliveryStatus, title: str | None) -> None:
        """Say once that a message failed: Meta delivers a status again and again until it gets a
        200, and may report a message Sabha has no record of sending (logged as such, not as an error)."""
        record = await self.deliveries.get(item.wamid)
        if record is not None and record.status in (DeliveryStatus.FAILED, DeliveryStatus.UNDELIVERABLE):
            log.debug("whatsapp: failed status for %s again (already recorded)", item.wamid)
            return
        why = "; ".join(_describe(e) for e in item.errors) or "no reason given"
        if record is None:
            log.warning("whatsapp: Meta says message %s to %s failed (%s), but Sabha has no record of sending it; "
                        "recorded, not retried", item.wamid, item.recipient, why)
        elif status is DeliveryStatus.UNDELIVERABLE:
            self._undeliverable(item.recipient or "?", record.reply_to, title or "")
        else:
            log.error("whatsapp: message %s to %s failed: %s", item.wamid, item.recipient, why)

    # -- commands --------------------------------------------------------------------

    def _register_role_commands(self) -> None:
        for role in self.uses.souls.roles():
            if role not in self.uses.commands:
                self.uses.commands.register_command(role, self._cmd_role,
                                            f"/{role}: talk to {role} until you switch (WhatsApp)")

    async def _cmd_role(self, envelope: Envelope, route: Route) -> str:
        role = route.command or GENERAL
        if envelope.channel != self.name:
            return f"/{role} switches roles on WhatsApp; here write @{role} <question> or /ask {role} <question>."
        try:
            label = self.uses.souls.profile(role).label
        except KeyError:
            return f"There is no role {role!r} any more. Send /roles for the board."
        back = "" if role == GENERAL else " Send /general to go back to the chair."
        return f"You are talking to {label} now; your next messages go to them.{back}"

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Open the HTTP session, load sticky roles, take up what is pending, accept webhooks."""
        self.state = "starting"
        await self.graph.open()
        await self.graph.reach.check()  # unreachable: logged, /readyz says so; webhooks are still stored
        try:
            await self.intake.inbox.prune()
            await self.roles.load()
            await self.people.load()
            self._register_role_commands()
            self.uses.room.subscribe(self.meetings)
            self.meetings.start()
            await self.access.refresh()
            await self.intake.resume()
        except BaseException:
            self.state = "failed"
            await self.graph.close()
            raise
        self.accepting = True
        self.started_at = time.monotonic()
        self.state = "running"
        self.graph.reach.start()
        if self.settings.access.value == "allowlist" and not self.settings.allowed_numbers:
            log.warning("whatsapp: whatsapp.allowed_numbers is empty, so every message is ignored; add your "
                        "number (e.g. 15550001111) or set whatsapp.access: public")
        log.info("whatsapp: number %s running (%s), webhook %s", self.settings.phone_number_id,
                 self.settings.access.value, self.settings.webhook_path)

    async def stop_intake(self) -> None:
        """Stop accepting notifications (Meta delivers them again later)."""
        self.accepting = False

    async def stop(self, grace: float | None = None) -> None:
        """Stop intake, let running answers finish (when this channel owns its hub), close the session."""
        if self.state not in ("running", "failed"):
            return
        self.state = "stopping"
        await self.stop_intake()
        await self.intake.wind_down(grace, owns_hub=self.owns_hub, alongside=self.meetings.drain)
        await self.graph.reach.stop()
        await self.graph.close()
        self.state = "stopped"
        log.info("whatsapp: stopped (sent %d, refused %d)", self.graph.sent, self.graph.refused)

    # -- status ------------------------------------------------------------------------

    def status_lines(self) -> list[str]:
        """Lines for ``/status`` and ``sabha status``."""
        g, c = self.graph, self.counts
        retries = ", ".join(f"{k.value} {v}" for k, v in g.retried.items()) or "none"
        lines = [f"whatsapp: {self.state}, number {self.settings.phone_number_id} ({self.settings.access.value})",
                 f"  sent {g.sent}, refused {g.refused}, retries: {retries}; statuses {c['statuses']}, "
                 f"bad signatures {c['bad_signature']}, invalid bodies {c['invalid']}"]
        if g.reach.problem:
            lines.append(f"  problem: {g.reach.problem}")
        if c["undeliverable"]:
            lines.append(f"  UNDELIVERABLE (24-hour window closed): {c['undeliverable']}; latest:")
            lines.extend(f"    {line}" for line in self.undeliverable)
        lines.extend(f"  {line}" for line in listed_changes(self.people.changes, self.access.allowed))
        if self.groups.allowed or self.groups.ignored:
            lines.append(f"  groups: {len(self.groups.allowed)} allowed (whatsapp.allowed_groups); "
                         f"{self.groups.ignored} message(s) ignored in other groups")
        if self.access.refused_rate or self.access.refused_cap:
            lines.append(f"  public mode refusals: rate {self.access.refused_rate}, daily cap {self.access.refused_cap}"
                         f" (spent today ${self.access.spent_today:.4f} of ${self.access.daily_usd:.2f})")
        lines.append(self.intake.status_line())
        return lines

    def describe(self) -> dict[str, Any]:
        """Machine-readable status (the daemon's /healthz)."""
        return {"state": self.state, "phone_number_id": self.settings.phone_number_id,
                "access": self.settings.access.value, "sent": self.graph.sent, "refused": self.graph.refused,
                "undeliverable": self.counts["undeliverable"], "webhook": self.settings.webhook_path,
                "problem": self.graph.reach.problem}


def _describe(error: WaError) -> str:
    return f"error {error.code} ({error.title or 'no title'}{': ' + error.details if error.details else ''})"


def public_terms(settings: WhatsAppSection) -> PublicTerms:
    """What strangers may do and cost here (public mode): the board holds their model calls to it."""
    return PublicTerms("whatsapp", daily_usd=settings.public_daily_usd, meetings=settings.public_meetings,
                       cap_text=CAP_REACHED, meetings_text=MEETINGS_CLOSED)


def build(parts: ChannelParts, loaded: LoadedConfig, hub: IntakeHub) -> WhatsAppChannel:
    """The plugin factory: the channel for ``loaded``'s ``whatsapp`` section."""
    return WhatsAppChannel(parts, loaded.config.whatsapp, hub=hub)

