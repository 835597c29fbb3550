"""The Slack channel: Slack's Events API in (signed HTTP requests on ``slack.events_path``), the Web API out,
the shared intake between.

``POST events_path``: the raw body (413 over 1 MB), its signature and timestamp (slack_sdk's
``SignatureVerifier``: missing, wrong or older than five minutes -> 401, nothing read, one log line), then the
body: ``url_verification`` is answered with its challenge; an ``event_callback`` with a ``message`` (channels,
private channels, DMs with the app) or an ``app_mention`` becomes an :class:`bot.intake.inbox.Arrival` stored
by :meth:`bot.intake.intake.Intake.receive` (the durable claim) and only then is the answer 200 (503 when the
state db cannot be written: Slack tries again). Slack redelivers what was not acknowledged within 3 s
(``X-Slack-Retry-Num``): the post's id is ``<channel>/<ts>`` (an ``app_mention`` and its ``message`` twin
are one post), so a redelivery is a no-op and the post is answered once. Bots' posts, the app's own (its
streamed edits among them) and hidden subtypes are ignored. Form posts (interactivity, slash commands) go to
:attr:`SlackChannel.forms` when set (``slackmore``'s buttons and ``/board``).

Where a post is and where its answer goes: :mod:`.places` (a thread is a conversation; the answer always goes
to the thread it answers). An *edit* of a post (``message_changed`` with a new text) is not read again: the
edit gets the channel's "edits are not read" line once per post, in the thread; the first answer stands (never
two answers). A *deletion* is logged; a question already received is still answered.

Answers stream by ``chat.update`` (:mod:`.stream`) and are delivered in mrkdwn (:mod:`.format`), split
at :data:`.format.MAX_TEXT`; a reply's buttons go as Block Kit blocks when :attr:`SlackChannel.blocks` is
set, else as a line naming their commands. Access: :mod:`.access`; names: :mod:`.identity`; Slack's API and
its rate limits: :mod:`.outbound`.

Seams for what is built on this channel: :attr:`SlackChannel.blocks` (a reply's buttons as Block Kit),
:attr:`SlackChannel.forms` (signed form posts: interactivity payloads, slash commands; they hand what they make
to :meth:`SlackChannel.claim`, the intake's durable claim), :attr:`SlackChannel.attachments` and
:attr:`SlackChannel.fetcher` (a post's files as attachments, and their download for the media pipeline; until
they are set a post with only a file gets the "text only" line), :attr:`SlackChannel.receiver` (Socket Mode,
started instead of the HTTP route, handing each event to :meth:`SlackChannel.take_event`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from board.commands.about import CHAIR_ADDRESSING, Addressing
from board.envelope import Button, Envelope, Reply
from board.llm.stream import StreamSink
from board.roles import GENERAL
from board.routing.router import Router
from board.spending.allowance import PublicTerms
from bot.channels.base import ChannelError, Reconfigures, ServesWebhook
from bot.channels.parts import ChannelParts
from bot.channels.receipt import received_request
from bot.channels.seen_once import SeenOnce
from bot.channels.slack.access import SCOPE, SlackAccessPolicy
from bot.channels.slack.config import SlackMode, SlackSection
from bot.channels.slack.format import escape, split_text, to_mrkdwn
from bot.channels.slack.identity import SlackNames
from bot.channels.slack.inbound import (
    SlackEventKind,
    SlackIgnored,
    SlackMessage,
    SlackRequest,
    SlackRequestKind,
    SlackRetry,
    parse_request,
    read_event,
    retry_of,
    signature_problem,
)
from bot.channels.slack.outbound import SlackIdentity, SlackWeb
from bot.channels.slack.places import Placement, SlackPlace, SlackPlaceKind, split_chat
from bot.channels.slack.store import SlackBoardEchoes, SlackDraftKey, SlackDraftStore, SlackThreadRoles
from bot.channels.slack.stream import INTERRUPTED, SlackDrafts
from bot.channels.webhook import BodyTooLarge, DeskVerdict, read_body, stored_earlier
from bot.intake.courier import (
    Admission,
    ChannelTexts,
    FetchesMedia,
    PostsNotice,
    ResolvesSender,
    ShowsInterruption,
    Streams,
    UniqueMessageIds,
)
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress
from bot.intake.inbox import Arrival, InboundKind
from bot.intake.intake import Intake, IntakeHub, StorageUnavailable

if TYPE_CHECKING:
    from board.media.attachment import Attachment
    from board.media.blobs import BlobSink
    from bot.config import LoadedConfig

__all__ = ["MAX_EVENT_BYTES", "SlackChannel", "SlackReceiver", "build", "public_terms"]

log = logging.getLogger("sabha.slack")

MAX_EVENT_BYTES = 1024 * 1024
ROUTER_TTL_S = 1.0
TEXTS = ChannelTexts(edited="I don't read edits to messages I've already received; my answer is to what you first "
                            "wrote. If you changed your question, please send it again as a new message.")
#: Turns a reply's buttons into Block Kit blocks under ``text`` (None: no blocks), see :attr:`SlackChannel.blocks`.
BlocksHook = Callable[[Reply, str], "list[dict[str, Any]] | None"]
#: Answers a signed form post (interactivity payloads, slash commands), see :attr:`SlackChannel.forms`.
FormsHook = Callable[[web.Request, bytes], Awaitable[web.Response]]
#: Sends what is left within a grace period at a stop, see :attr:`SlackChannel.drains`.
DrainHook = Callable[[float], Awaitable[None]]
#: Told of a message posted (or edited in) with blocks: (channel, ts, text, blocks), see :attr:`SlackChannel.posted`.
PostedHook = Callable[[str, str, str, "Sequence[dict[str, Any]] | None"], Awaitable[None]]
#: The attachments of a post (its ``files``), see :attr:`SlackChannel.attachments`.
AttachmentsHook = Callable[[SlackMessage], "tuple[Attachment, ...]"]
#: Streams one attachment's bytes into a sink (``files.info`` + the private URL), see :attr:`SlackChannel.fetcher`.
FetchHook = Callable[["Attachment", "BlobSink"], Awaitable[None]]


class SlackReceiver(Protocol):
    """What receives Slack's events instead of the HTTP route (Socket Mode), see :attr:`SlackChannel.receiver`: it
    hands each ``event_callback`` to :meth:`SlackChannel.take_event` and acknowledges it only after that returns."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    @property
    def problem(self) -> str | None:
        """Why the channel is not ready (the socket down too long), or None."""


class SlackChannel(UniqueMessageIds, ResolvesSender, Streams, PostsNotice[str], ShowsInterruption, FetchesMedia,
                   Reconfigures[SlackSection], ServesWebhook):
    """One Slack app in one workspace; see the module docstring. Its message ids (``<channel>/<ts>``) are unique
    in the workspace."""

    name = "slack"
    texts = TEXTS

    def __init__(self, parts: ChannelParts, settings: SlackSection, *, hub: IntakeHub | None = None) -> None:
        if settings.bot_token is None:
            raise ChannelError("slack.bot_token must be set (export SLACK_BOT_TOKEN; see docs/slack.md)")
        if settings.mode is SlackMode.EVENTS and settings.signing_secret is None:
            raise ChannelError("slack.signing_secret must be set for the Events API (export SLACK_SIGNING_SECRET)")
        self.uses = parts
        self.settings = settings
        parts.commands.describe_channel(self.name, Addressing((
            ("<message>", "in an advisor's channel: that advisor; in the board channel or a DM: the chair"),
            ("@finance <question>", "address an advisor by name; the thread stays theirs"),
            *CHAIR_ADDRESSING.rows[1:])))
        self.owns_hub = hub is None
        self.hub = hub or IntakeHub()
        self.web = SlackWeb(settings.bot_token.get_secret_value(), settings.api_base_url)
        self.access = SlackAccessPolicy(settings, parts.db, closed=lambda usd: parts.spend.closed("public", SCOPE, usd))
        parts.money.set_public_terms(public_terms(settings))
        self.places = Placement(settings.board_channel, settings.channels)
        self.thread_roles = SlackThreadRoles(parts.db)
        self.board_echoes = SlackBoardEchoes(parts.db)  # /board's echoes, by trigger_id (.interactivity)
        self.drafts = SlackDrafts(self.web, SlackDraftStore(parts.db), enabled=settings.stream,
                                  interval=settings.stream_edit_interval_s)
        self.names = SlackNames(self.web.user_name, after=self.hub.after_receipts)
        self.intake: Intake = self.hub.intake(parts.intake, self)
        secret = settings.signing_secret.get_secret_value() if settings.signing_secret is not None else "unused"
        self.verifier = SignatureVerifier(secret)
        self.identity = SlackIdentity("", "", "", "")
        self.state = "created"
        self.accepting = False
        self.counts = {"bad_signature": 0, "stale": 0, "invalid": 0, "retries": 0, "ignored": 0, "edits": 0,
                       "deleted": 0}
        self._logged = SeenOnce()
        self._router_cache: tuple[float, Router] | None = None
        #: Seams for the rest of the channel: Block Kit buttons, form posts (interactivity, slash commands), a
        #: post's files and their download, and Socket Mode (the receiver started instead of the HTTP route).
        self.blocks: BlocksHook | None = None
        self.forms: FormsHook | None = None
        self.attachments: AttachmentsHook | None = None
        self.fetcher: FetchHook | None = None
        self.receiver: SlackReceiver | None = None
        self.drains: DrainHook | None = None  # posts left to make at a stop (the meeting relay's)
        self.posted: PostedHook | None = None  # told of each message posted with blocks (a decision's buttons)

    def reconfigure(self, section: SlackSection) -> None:
        """Apply what may change while running (SIGHUP): access, the allowlist, the public limits and the places.
        The rest needs a restart."""
        self.access.reconfigure(section)
        self.places.reconfigure(section.board_channel, section.channels)
        self.settings = self.settings.model_copy(update={
            "access": section.access, "allowed_user_ids": list(section.allowed_user_ids),
            "public_rate_per_minute": section.public_rate_per_minute, "public_daily_usd": section.public_daily_usd,
            "board_channel": section.board_channel, "channels": dict(section.channels)})
        self.uses.money.set_public_terms(public_terms(self.settings))

    # -- what the intake needs (bot.intake.courier.Courier) ----------------------------

    def admit(self, envelope: Envelope) -> Admission:
        """Allowlist or public mode (:mod:`.access`), for the sender wherever they write."""
        return self.access.admit(envelope.sender)

    def current(self, envelope: Envelope) -> Envelope:
        """``envelope`` with its sender's name as Slack knows it now (looked up after the claim)."""
        name = self.names.name(envelope.sender)
        if name is None or name == envelope.sender_name:
            return envelope
        return dataclasses.replace(envelope, sender_name=name)

    def conversation(self, envelope: Envelope) -> str:
        """A thread (or a DM) is one conversation."""
        return f"slack:{envelope.chat_id}"

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        """Slack has no typing indicator for a bot's Web API: the streamed draft shows the work."""
        yield

    @contextlib.asynccontextmanager
    async def stream(self, envelope: Envelope) -> AsyncIterator[StreamSink | None]:
        """The answer's draft in the thread, edited while it is written (:mod:`.stream`)."""
        async with self.drafts.streaming(envelope) as draft:
            yield draft

    async def interrupted(self, chat_id: str, message_id: str) -> None:
        """The answer to ``message_id`` will not come: its draft (if one was posted) says so."""
        key = SlackDraftKey(chat_id, message_id)
        try:
            stored = await self.drafts.store.get(key)
            if stored is not None and stored.ts:
                channel, _ = split_chat(chat_id)
                await self.web.update(channel, stored.ts, INTERRUPTED, None)
            await self.drafts.store.forget(key)
        except Exception as exc:  # noqa: BLE001 - never raises
            log.warning("slack: could not mark the draft of %s in %s as interrupted (%s)", message_id, chat_id, exc)

    async def post_notice(self, reply: Reply) -> str | None:
        """The "working on it" notice: not posted when the answer's streamed draft shows the work; else posted in
        the thread and made the answer's draft (the answer is edited over it)."""
        if not reply.reply_to:
            return None
        channel, thread = split_chat(reply.chat_id)
        key = SlackDraftKey(reply.chat_id, reply.reply_to)
        return await self.drafts.notice(key, lambda: self.web.post(channel, escape(reply.text), thread, None))

    async def deliver_over(self, notice: str, reply: Reply, progress: SendProgress) -> None:
        """Deliver ``reply`` over its notice (its draft: :meth:`deliver` edits it)."""
        await self.deliver(reply, progress)

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """The media service's download of a post's file (:attr:`fetcher`)."""
        if self.fetcher is None:
            from board.media.problems import MediaProblem, Problem

            raise MediaProblem(Problem.UNAVAILABLE, "I can't read files sent on Slack yet; please paste the text.")
        await self.fetcher(attachment, sink)

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        """Send ``reply`` to the thread (or DM) it answers: over its streamed draft when there is one (the first
        part edited in), the rest as more messages in the thread. A copy sent once more (``progress.again``)
        goes as new messages; one that skips what certainly arrived (``progress.skip``) starts after it, headed
        by ``progress.heading``."""
        channel, thread = split_chat(reply.chat_id)
        pieces = self._pieces(reply)
        key = SlackDraftKey(reply.chat_id, reply.reply_to) if reply.reply_to else None
        over = await self._draft_ts(key) if key is not None and not progress.again else None
        skip = progress.skip
        for i, piece in enumerate(pieces[skip:], start=skip):
            progress.part = f"{i + 1}/{len(pieces)}" if len(pieces) > 1 else ""
            text = f"{progress.heading}\n\n{piece}" if skip and i == skip and progress.heading else piece
            blocks = self.blocks(reply, text) if self.blocks is not None and i == len(pieces) - 1 else None
            if i == 0 and over is not None and key is not None:
                await self.drafts.settle(key)
                if await self._edit_over(channel, over, text, progress, blocks):
                    progress.note = "edited over the streamed draft"
                    if blocks and self.posted is not None:
                        await self.posted(channel, over, text, blocks)
                    await progress.part_done(i + 1, len(pieces))
                    continue
            ts = await self.web.post(channel, text, thread, progress, blocks)
            if blocks and self.posted is not None:
                await self.posted(channel, ts, text, blocks)
            await progress.part_done(i + 1, len(pieces))
        if key is not None:
            with contextlib.suppress(Exception):
                await self.drafts.store.forget(key)

    def _pieces(self, reply: Reply) -> list[str]:
        body = to_mrkdwn(reply.text)
        if reply.name and reply.kind in ("answer", "meeting", "command"):
            body = f"*{escape(reply.label)}*\n{body}"
        if reply.buttons and self.blocks is None:
            body += "\n\n" + _buttons_line(reply.buttons)
        return split_text(body) or ["(empty answer)"]

    async def _draft_ts(self, key: SlackDraftKey) -> str | None:
        stored = await self.drafts.store.get(key)
        if stored is None:
            return None
        if stored.ts is None:
            log.warning("slack: the streamed draft of the answer to %s in %s was being posted when Sabha stopped; "
                        "its ts is unknown, so the answer goes as a new message (a partial draft may stay above)",
                        key.reply_to, key.chat_id)
        return stored.ts

    async def _edit_over(self, channel: str, ts: str, text: str, progress: SendProgress,
                         blocks: list[dict[str, Any]] | None) -> bool:
        """Edit the draft ``ts`` into ``text``; False when Slack says it is gone (then it is posted anew)."""
        try:
            await self.web.update(channel, ts, text, progress, blocks)
        except SendFailed as exc:
            if exc.outcome is DeliveryOutcome.NOT_SENT and "message_not_found" in str(exc):
                log.info("slack: the streamed draft %s in %s is gone; the answer is posted anew", ts, channel)
                return False
            raise
        return True

    # -- the Events API ----------------------------------------------------------------

    @property
    def webhook_path(self) -> str:
        """``slack.events_path``."""
        return self.settings.events_path

    def front_desk(self, headers: Mapping[str, str], body: bytes) -> DeskVerdict:
        """On the front desk (:mod:`bot.channels.held.desk`): a signed ``event_callback`` is stored, then
        acknowledged; a form post (interactivity, a slash command) or Slack's URL check is relayed (the channel writes
        its answer); a bad signature or a body that is not an Events API request is refused as :meth:`_take` does."""
        problem = signature_problem(self.verifier, body, headers)
        if problem is not None:
            return DeskVerdict(401, f"signature {problem.value}")
        if headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return DeskVerdict(relay=True)
        try:
            parsed = parse_request(body)
        except ValueError:
            return DeskVerdict(400, "not an Events API request")
        return DeskVerdict() if parsed.kind is SlackRequestKind.EVENT else DeskVerdict(relay=True)

    def webhook_senders(self, body: bytes) -> frozenset[str] | None:
        """The Slack conversation (channel id) of a stored ``event_callback``; None for anything else."""
        try:
            parsed = parse_request(body)
        except ValueError:
            return None
        place = (parsed.event or {}).get("channel") if parsed.kind is SlackRequestKind.EVENT else None
        return frozenset({f"slack:{place}"}) if isinstance(place, str) and place else None

    def routes(self) -> list[web.RouteDef]:
        """Events (and, through :attr:`forms`, interactivity and slash commands) on ``slack.events_path``."""
        if self.settings.mode is not SlackMode.EVENTS:
            return []
        return [web.post(self.settings.events_path, self._events)]

    async def _events(self, request: web.Request) -> web.StreamResponse:
        with self.hub.receiving():  # acknowledging an event comes before starting answers
            return await received_request(self.name, request, self._take)

    async def _take(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await read_body(request, MAX_EVENT_BYTES)
        except BodyTooLarge as exc:
            log.warning("slack events: %s", exc)
            return web.Response(status=413, text="body too large")
        problem = signature_problem(self.verifier, body, request.headers, stored=stored_earlier(request))
        if problem is not None:
            self.counts["stale" if problem.value == "stale" else "bad_signature"] += 1
            log.warning("slack events: refused a request from %s: %s signature (check slack.signing_secret; a stale "
                        "one is older than five minutes: a replay, or this machine's clock is off)", request.remote,
                        problem.value)
            return web.Response(status=401, text=f"signature {problem.value}")
        if request.content_type == "application/x-www-form-urlencoded":
            if self.forms is not None:
                return await self.forms(request, body)
            log.info("slack: a form post (interactivity or a slash command) arrived; this build does not read them")
            return web.Response(text="")
        try:
            parsed = parse_request(body)
        except ValueError as exc:
            self.counts["invalid"] += 1
            log.warning("slack events: rejected a body that is not an Events API request: %s", exc)
            return web.Response(status=400, text="not an Events API request")
        if parsed.kind is SlackRequestKind.CHALLENGE:
            log.info("slack: answered Slack's URL verification of %s", self.settings.events_path)
            return web.json_response({"challenge": parsed.challenge})
        if parsed.kind is SlackRequestKind.OTHER:
            log.info("slack events: a %s request (nothing to do)", parsed.type)
            return web.Response(text="")
        if not self.accepting:
            return web.Response(status=503, text="not accepting events right now")
        try:
            await self.take_event(parsed, retry_of(request.headers))
        except StorageUnavailable:
            return web.Response(status=503, text="cannot store the event right now; Slack will retry")
        return web.Response(text="")

    async def take_event(self, parsed: SlackRequest, retry: SlackRetry | None = None) -> None:
        """Claim one ``event_callback`` through the intake (the durable store); returns once it is stored, or
        known to be nothing to store. Raises :class:`StorageUnavailable` when it could not be stored: then it
        must not be acknowledged. Socket Mode hands its envelopes' payloads here too."""
        if retry is not None:
            self.counts["retries"] += 1
            log.info("slack: event %s again (Slack's retry %d, %s): a post already stored is not answered again",
                     parsed.event_id or "?", retry.number, retry.reason)
        event = parsed.event or {}
        read = read_event(event, bot_user=self.identity.user_id, bot_id=self.identity.bot_id)
        if isinstance(read, SlackIgnored):
            self.counts["ignored"] += 1
            if not read.quiet and self._logged.first(parsed.event_id, "ignored"):
                log.info("slack: ignored %s (event %s)", read.why, parsed.event_id or "?")
            return
        await self.access.refresh()  # what strangers spent today (public mode; read at most once a second)
        arrival = await self._arrival(read)
        if arrival is not None:
            await self.intake.receive([arrival])  # the durable claim (group commit)

    async def claim(self, arrivals: list[Arrival]) -> None:
        """Store ``arrivals`` made elsewhere (a button press, a slash command) through the intake: the same
        durable claim, dedupe and owner checks as a post."""
        await self.access.refresh()
        await self.intake.receive(arrivals)

    async def _arrival(self, message: SlackMessage) -> Arrival | None:
        place = self.places.place(message)
        if place is None:
            return None
        if message.kind is SlackEventKind.DELETE:
            self.counts["deleted"] += 1
            log.info("slack: post %s was deleted; if it was received, its answer stands", message.message_id)
            return None
        envelope = self._envelope(message, place)
        if message.kind is SlackEventKind.EDIT:
            self.counts["edits"] += 1
            envelope = dataclasses.replace(envelope, message_id=f"{message.message_id}/edited")
            return Arrival(envelope, self.conversation(envelope), InboundKind.EDITED)
        if message.files and not envelope.attachments and not envelope.text.strip():
            return Arrival(envelope, self.conversation(envelope), InboundKind.UNSUPPORTED)  # the "text only" line
        if place.kind is SlackPlaceKind.BOARD and place.thread_ts == message.ts:
            await self.stick(envelope)
        return Arrival(envelope, self.conversation(envelope), InboundKind.TEXT)

    def _envelope(self, message: SlackMessage, place: SlackPlace) -> Envelope:
        role = place.role_hint or (self.thread_roles.role_of(place.chat_id) if place.kind is SlackPlaceKind.BOARD
                                   else None)
        attachments = self.attachments(message) if self.attachments is not None and message.files else ()
        return Envelope(channel=self.name, text=message.text, sender=message.user, chat_id=place.chat_id,
                        message_id=message.message_id, sender_name=self.names.name(message.user),
                        is_group=place.is_group, is_owner=self.access.is_owner(message.user),
                        is_public=self.access.is_public(message.user), role_hint=role, attachments=attachments)

    async def stick(self, envelope: Envelope) -> None:
        """A thread's first post (or ``/board``) in the board channel that addresses an advisor: the thread is
        theirs."""
        if not (self.access.listed(envelope.sender) or self.access.is_public(envelope.sender)):
            return
        route = self._router().route(envelope)
        if route.kind == "chat" and not route.error and route.role and route.role != GENERAL:
            await self.thread_roles.remember(envelope.chat_id, route.role)

    def _router(self) -> Router:
        now = time.monotonic()
        if self._router_cache is None or now - self._router_cache[0] >= ROUTER_TTL_S:
            self._router_cache = (now, self.uses.router())
        return self._router_cache[1]

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Open the client, learn who the app is (``auth.test``), take up what is pending, accept events."""
        if self.settings.mode is not SlackMode.EVENTS and self.receiver is None:
            raise ChannelError("slack.mode: socket needs Sabha's Socket Mode client, which this build does not have; "
                               "set slack.mode: events (and slack.signing_secret) to receive the Events API over HTTP")
        self.state = "starting"
        await self.web.open()
        try:
            await self._who_am_i()
            await self.intake.inbox.prune()
            await self.drafts.store.prune()
            await self.board_echoes.prune()
            await self.thread_roles.load()
            await self.access.refresh()
            await self.intake.resume()
        except BaseException:
            self.state = "failed"
            await self.web.close()
            raise
        self.accepting = True
        self.state = "running"
        self.web.reach.start()
        if self.receiver is not None:
            await self.receiver.start()
        if self.settings.access.value == "allowlist" and not self.settings.allowed_user_ids:
            log.warning("slack: slack.allowed_user_ids is empty, so nobody is answered; add your Slack user id "
                        "(Profile > ⋮ > Copy member ID) or set slack.access: public")
        if self.settings.board_channel is None and not self.settings.channels:
            log.warning("slack: neither slack.board_channel nor slack.channels is set: only DMs with the app are "
                        "answered")
        log.info("slack: app %s in workspace %s running (%s, %s), events at %s", self.identity.user_id or "?",
                 self.identity.team or self.identity.team_id or "?", self.settings.mode.value,
                 self.settings.access.value, self.settings.events_path)

    async def _who_am_i(self) -> None:
        try:
            self.identity = await self.web.auth_test()
        except SlackApiError as exc:
            error = str(exc.response.get("error", "error"))
            raise ChannelError(f"Slack refused slack.bot_token ({error}): copy the Bot User OAuth Token (xoxb-...) "
                               "from the app's OAuth & Permissions page into SLACK_BOT_TOKEN") from exc
        except Exception as exc:  # noqa: BLE001 - unreachable: events are still stored; /readyz says so
            self.web.reach.lost(f"auth.test: {type(exc).__name__}: {exc}")
            return
        self.web.reach.reached()

    async def stop_intake(self) -> None:
        """Stop accepting events (Slack retries them later)."""
        self.accepting = False

    async def stop(self, grace: float | None = None) -> None:
        """Stop intake, let running answers finish (when this channel owns its hub), close the client."""
        if self.state not in ("running", "failed"):
            return
        self.state = "stopping"
        await self.stop_intake()
        if self.receiver is not None:
            await self.receiver.stop()
        await self.intake.wind_down(grace, owns_hub=self.owns_hub, alongside=self.drains)
        await self.names.settle()
        await self.web.reach.stop()
        await self.web.close()
        self.state = "stopped"
        log.info("slack: stopped (sent %d, edited %d, refused %d)", self.web.sent, self.web.edited, self.web.refused)

    # -- status ------------------------------------------------------------------------

    def status_lines(self) -> list[str]:
        """Lines for ``/status`` and ``sabha status``."""
        w, c = self.web, self.counts
        lines = [f"slack: {self.state}, app {self.identity.user_id or '?'} ({self.settings.mode.value}, "
                 f"{self.settings.access.value})",
                 f"  sent {w.sent}, edited {w.edited}, refused {w.refused}, rate-limited {w.rate_limited} "
                 f"({w.waited:.0f} s waited); retries from Slack {c['retries']}, bad signatures "
                 f"{c['bad_signature'] + c['stale']}, ignored {c['ignored'] + self.places.ignored}"]
        if w.reach.problem:
            lines.append(f"  problem: {w.reach.problem}")
        if self.access.refused_rate or self.access.refused_cap:
            lines.append(f"  public mode refusals: rate {self.access.refused_rate}, daily cap "
                         f"{self.access.refused_cap}")
        lines.append(self.intake.status_line())
        return lines

    def describe(self) -> dict[str, Any]:
        """Machine-readable status (``/healthz``; ``/readyz`` reads ``state`` and ``problem``)."""
        return {"state": self.state, "app": self.identity.user_id, "team": self.identity.team_id,
                "mode": self.settings.mode.value, "access": self.settings.access.value, "sent": self.web.sent,
                "edited": self.web.edited, "rate_limited": self.web.rate_limited, "events": self.settings.events_path,
                "problem": self.web.reach.problem or (self.receiver.problem if self.receiver is not None else None)}


def _buttons_line(buttons: tuple[Button, ...]) -> str:
    return "Reply with " + " · ".join(f"`{escape(b.command)}` ({escape(b.label)})" for b in buttons)


def public_terms(settings: SlackSection) -> PublicTerms:
    """What strangers may cost here (public mode): the board holds their model calls to it; no meetings."""
    return PublicTerms("slack", daily_usd=settings.public_daily_usd)


def build(parts: ChannelParts, loaded: LoadedConfig, hub: IntakeHub) -> SlackChannel:
    """The plugin factory: the channel for ``loaded``'s ``slack`` section, with what is built on it (buttons,
    ``/board``, files, meetings, Socket Mode: :func:`.interactivity.install`)."""
    from bot.channels.slack.interactivity import install

    channel = SlackChannel(parts, loaded.config.slack, hub=hub)
    install(channel)
    return channel
