"""Convening the board: runs meetings and consultations on top of the agent runner.

:class:`BoardRoom` adapts :meth:`board.agent.runner.AgentRunner.exchange` to the
:class:`board.agent.speaker.Speaker` protocol (each role speaks with its own soul, its own
tools and the colleagues of its roster), holds meetings in the background or to
completion, publishes their progress events to subscribers (the channels), and
provides the ``consult`` and ``convene_meeting`` tools and the roundtable.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from board.agent.runner import AgentRunner, place_of
from board.agent.speaker import Ask, Speaker, Utterance
from board.agent.tools import Tool, ToolContext, ToolResult
from board.clock import SYSTEM_CLOCK, Clock
from board.envelope import Envelope
from board.language.detect import LanguageChoice, LanguageSource, choose_language
from board.llm.base import PromptBlock, ToolSpec, Usage
from board.llm.offline import OFFLINE_NOTICE
from board.llm.purpose import CallPurpose
from board.media.store import MediaStore
from board.roles import GENERAL
from board.room.consult import ConsultService, ConsultSettings
from board.room.evidence import Evidence, evidence_for
from board.room.settings import MEETINGS_OFF, MeetingSettings
from board.room.store import MeetingStore
from board.room.table import Contribution, Control, ControlKind, MeetingTable, Written
from board.schedule.work import Place
from board.spending.allowance import current_allowance
from board.spending.ledger import RunTag, spending_for_run
from board.storage import Dialect
from board.tasks import finish_tasks
from board.workspace.prompt import PromptBuilder, TurnContext
from board.workspace.souls import AgentProfile, SoulStore

if TYPE_CHECKING:  # the meeting machinery loads with the first meeting (a chat turn never needs it)
    from board.room.estimate import Estimate
    from board.room.meeting import MeetingEvent, MeetingResult, MeetingRun, Subscriber
    from board.room.meeting.lease import MeetingLease, MeetingLeases
    from board.room.meeting.resume import Resumable
    from board.room.pending import MeetingCall, StartGate, StartRequest

__all__ = ["CHAIR_TOOLS", "CONVENE_TOOL", "ROUNDTABLE_TOOL", "SUMMARIZER", "BoardRoom", "MeetingInProgress"]

log = logging.getLogger("sabha.convene")

SUMMARIZER = "summarizer"
CONVENE_TOOL = "convene_meeting"
ROUNDTABLE_TOOL = "roundtable"  # the chair's roundtable (board.room.roundtable_tool)
#: the chair's tools that call the board together: never offered inside a meeting (no meeting calls another)
CHAIR_TOOLS = (CONVENE_TOOL, ROUNDTABLE_TOOL)


class MeetingInProgress(RuntimeError):
    """A meeting is already running for this place; one at a time per chat."""


@dataclass(kw_only=True, eq=False)
class BoardRoom:
    """Meetings, consultations and the roundtable for one board."""

    runner: AgentRunner
    prompts: PromptBuilder
    souls_for: Callable[[str], SoulStore]
    default_roster: str
    store: MeetingStore
    meeting_settings: MeetingSettings
    consult_settings: ConsultSettings
    clock: Clock = SYSTEM_CLOCK  # the board's one clock; meetings read it (board.clock)
    subscribers: list[Subscriber] = field(default_factory=list)  # told of every meeting's progress (subscribe)
    gate: StartGate | None = None  # meetings over board.meetings.confirm_over_usd wait here for Start (None: never)
    _tasks: dict[str, asyncio.Task[MeetingResult]] = field(default_factory=dict, init=False)
    #: ended meetings' bookkeeping still running after the meeting returned (board.room.subscribers.Bookkeeping)
    _books: dict[str, asyncio.Task[None]] = field(default_factory=dict, init=False)
    _places: dict[tuple[str, str, int | None], str] = field(default_factory=dict, init=False)
    _consults: dict[str, ConsultService] = field(default_factory=dict, init=False)
    _runs: dict[str, MeetingRun] = field(default_factory=dict, init=False)  # meetings this process holds
    _nudges: dict[str, asyncio.Event] = field(default_factory=dict, init=False)
    _leases: MeetingLeases | None = field(default=None, init=False)  # replicas: the meetings' leases (keep_running)
    #: meetings this process built or resumed: their displays heard them (never told again: retell_ended)
    _here: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.consult = self.consult_for(self.default_roster)
        self.table = MeetingTable(self.store.db)

    # -- the owner at the table (board.room.table) -------------------------

    async def meeting_at(self, channel: str, chat_id: str, thread_id: int | str | None) -> str | None:
        """The running meeting shown in this place (its origin chat or its own thread), or None."""
        return await self.table.meeting_at(channel, chat_id, thread_id)

    async def contribute(self, meeting_id: str, *, sender: str, name: str, text: str, via: str,
                         message_id: str | None = None, thread_id: str | None = None) -> Contribution:
        """Store what ``sender`` wrote into running meeting ``meeting_id`` (the meeting quotes it to every
        member in its next round) and wake the meeting if this process holds it. Who may contribute is the
        caller's check (the owner, ``board.meetings.participants``)."""
        run = self._runs.get(meeting_id)
        addressed = None
        words = text.strip().split(maxsplit=1)
        if words and words[0].startswith("@") and run is not None:
            addressed = run.m.resolve_role(words[0])
        contribution = await self.table.contribute(
            meeting_id, Written(sender, name, text, via, message_id, thread_id),
            round_no=run.s.current_round if run is not None else 0, addressed=addressed)
        self.nudge(meeting_id)
        return contribution

    async def control(self, meeting_id: str, kind: ControlKind, *, by: str) -> Control:
        """Store a control (wrap, pause, resume, extend, cancel) for the meeting to act on at its next
        phase boundary, and wake the meeting if this process holds it."""
        stored = await self.table.control(meeting_id, kind, by=by)
        self.nudge(meeting_id)
        return stored

    def nudge(self, meeting_id: str) -> None:
        """Wake meeting ``meeting_id`` if this process holds it and it waits (paused, between rounds)."""
        event = self._nudges.get(meeting_id)
        if event is not None:
            event.set()

    async def quiet(self, meeting_id: str, *, at_most: float) -> None:
        """Until meeting ``meeting_id`` waits on its models (a display posts then, off the meeting's path:
        :mod:`board.room.meeting.pace`), at most ``at_most`` s; at once when this process does not run it."""
        run = self._runs.get(meeting_id)
        if run is not None:
            await run.s.pace.quiet(at_most)

    def nudged(self, meeting_id: str) -> asyncio.Event:
        """The event :meth:`nudge` sets for ``meeting_id`` (the meeting clears it when it has looked)."""
        return self._nudges.setdefault(meeting_id, asyncio.Event())

    def consult_for(self, roster: str) -> ConsultService:
        """Consultation among the roles of ``roster`` (a meeting of another roster consults its own)."""
        service = self._consults.get(roster)
        if service is None:
            souls = self.souls_for(roster)
            service = self._consults[roster] = ConsultService(
                speak=self.speaker(roster, purpose=CallPurpose.CONSULT),
                roles=souls.roles,
                names=lambda role: souls.profile(role).name if souls.has(role) else role,
                settings=self.consult_settings,
                db=self.store.db,
            )
        return service

    async def _consult(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.consult_for(ctx.roster or self.default_roster).handle(args, ctx)

    # -- speaking ----------------------------------------------------------------

    def speaker(self, roster: str, *, purpose: CallPurpose, language: LanguageChoice | None = None) -> Speaker:
        """A Speaker whose roles come from ``roster`` (its colleagues appear in each prompt). Each
        prompt names ``language`` (a meeting's: that of its topic), else the language of the
        message being answered (USER.md's when it fixes one)."""

        async def speak(ask: Ask, ctx: ToolContext) -> Utterance:
            souls = self.souls_for(roster)
            profile = souls.profile(ask.role)
            envelope = ctx.envelope
            said = language or choose_language(envelope.text if envelope else "", fixed=self.prompts.user_language())
            turn = TurnContext(
                channel=envelope.channel if envelope else "board",
                place=(f"board meeting {ctx.meeting_id}" if ctx.meeting_id else
                       place_of(envelope) if envelope else "board"),
                sender=(envelope.sender_name or envelope.sender) if envelope else "the board",
                now=self.clock.now(),
                language=said,
            )
            system = (
                PromptBlock("static", self.prompts.static(profile, souls.profiles(), roster), cacheable=True),
                PromptBlock("dynamic", self.prompts.dynamic(turn)),
            )
            message, schema = ask.message, ask.response_schema
            if schema is not None:
                message = (f"{message}\n\nReply with exactly one JSON object that matches this JSON schema:\n"
                           f"{json.dumps(schema, ensure_ascii=False)}")
            allowed = ask.tools
            if allowed is None:
                allowed = tuple(t for t in self.runner.allowed_tools(profile)
                                if t not in CHAIR_TOOLS or not ctx.meeting_id)
            none = ask.tools == () and not ask.extra_tools  # "no tools at all": not the role's outside ones either
            outcome = await self.runner.exchange(
                profile, message, ctx, system=system, tools_allowed=allowed, extra_tools=ask.extra_tools,
                ledger_tags={"purpose": purpose, **({"phase": ask.phase} if ask.phase else {})},
                max_tool_iterations=0 if none else None,
                metadata={"response_schema": schema} if schema is not None else None,
            )
            return Utterance(text=outcome.text, cost_usd=outcome.cost_usd or 0.0, model=outcome.model,
                             degraded=outcome.degraded, tool_events=outcome.tool_events)

        return speak

    # -- meetings ----------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> None:
        """Receive every meeting's progress events (channels filter by ``event.origin``)."""
        self.subscribers.append(subscriber)

    def _participants(self, roster: str, chair_role: str) -> tuple[AgentProfile, list[AgentProfile]]:
        souls = self.souls_for(roster)
        chair = souls.profile(chair_role)
        specialists = [p for p in souls.profiles() if p.role not in (chair_role, GENERAL, SUMMARIZER)]
        if not specialists:
            raise ValueError(f"the {roster} roster has no specialists to meet")
        return chair, specialists

    def prepare(
        self,
        topic: str,
        *,
        envelope: Envelope | None = None,
        roster: str | None = None,
        settings: MeetingSettings | None = None,
        chair_role: str = GENERAL,
        agenda: str | None = None,
        extra_subscribers: Sequence[Subscriber] = (),
        extra_owners: Sequence[str] = (),
    ) -> MeetingRun:
        """Build a meeting without starting it; ValueError while meetings are off (config), for a blank
        topic or a roster without specialists."""
        from board.room.meeting import MeetingContext, MeetingRun, new_meeting_id

        if settings is None and not self.meeting_settings.enabled:  # the roundtable passes settings of its own
            raise ValueError(MEETINGS_OFF)
        topic = " ".join(topic.split())
        if not topic:
            raise ValueError("a meeting needs a topic: /meeting <topic>")
        roster = roster or self.default_roster
        chair, specialists = self._participants(roster, chair_role)
        base = ToolContext(role=chair.role, session_key="meeting", envelope=envelope)
        souls = self.souls_for(roster)
        meeting_id = new_meeting_id()
        self._here.add(meeting_id)
        run = MeetingRun(MeetingContext(
            id=meeting_id, topic=topic, roster=roster, chair=chair, specialists=specialists,
            speak=self.speaker(roster, purpose=CallPurpose.MEETING, language=self._meeting_language(topic)),
            store=self.store,
            settings=settings or self.meeting_settings,
            render_minutes=lambda context: self.prompts.render("minutes.md.j2", **context),
            subscribers=[*self.subscribers, *extra_subscribers], base_ctx=base,
            resolve_role=lambda name: _find_role(souls, name),
            models={p.role: self.runner.model_for(p) for p in [chair, *specialists]},
            extra_owners=tuple(extra_owners), preset_agenda=agenda, clock=self.clock, outside=self.runner.outside,
            outside_ready=self.runner.outside_ready, wake=functools.partial(self.nudged, meeting_id),
            afterwards=self._keep_books,
        ))
        if self._leases is not None:  # replicas: it runs under its lease, taken before its row is written
            run.m = replace(run.m, lease=self._leases.of(run.id))
        present = {p.role for p in [chair, *specialists]}
        for status in souls.status():
            if status.role not in present and status.role not in (GENERAL, SUMMARIZER, chair_role):
                warning = f"{status.role} is not in this meeting: no usable soul file ({status.error})"
                log.warning("meeting %s: %s", run.id, warning)
                run.warnings.append(warning)
        offline = sorted({m for m in run.models.values() if m.split(":", 1)[0] == "offline"})
        if offline:
            run.warnings.append(OFFLINE_NOTICE.strip("()") + " (said once here, not on every statement)")
        unpriced = sorted({m for m in (self.runner.model_for(p) for p in [chair, *specialists])
                           if self.runner.settings.prices.cost(m, Usage()) is None})
        if unpriced and run.settings.budget_usd > 0:
            warning = (f"the ${run.settings.budget_usd:g} budget is not enforced for {', '.join(unpriced)}: no price "
                       "is known for it (add one under llm.prices)")
            log.warning("meeting %s: %s", run.id, warning)
            run.warnings.append(warning)
        return run

    def _meeting_language(self, topic: str) -> LanguageChoice | None:
        """The language a meeting speaks, and so its minutes are written in: USER.md's, else its topic's."""
        fixed = self.prompts.user_language()
        choice = choose_language(topic, fixed=fixed)
        if choice is None or choice.source is not LanguageSource.MESSAGE:
            return choice
        return LanguageChoice(choice.language, LanguageSource.REQUEST)

    async def hold(self, topic: str, **kwargs: Any) -> MeetingResult:
        """Hold a meeting to its end and return the result (its end's bookkeeping done too: the caller reads what
        it wrote, and a terminal's process may end next)."""
        run = self.prepare(topic, **kwargs)
        result = await run.run()
        await self.bookkept(run.id)
        return result

    async def run_held(self, run: MeetingRun) -> MeetingResult:
        """Run prepared meeting ``run`` to its end in the caller's task (``sabha meeting`` in a terminal), held
        as a background one is: contributions and controls (:meth:`contribute`, :meth:`control`) reach it. Returns
        once its end's bookkeeping is done too."""
        self._runs[run.id] = run
        try:
            result = await run.run()
        finally:
            self._runs.pop(run.id, None)
            self._nudges.pop(run.id, None)
        await self.bookkept(run.id)
        return result

    # -- the end's bookkeeping, after the meeting returned (board.room.subscribers.Bookkeeping) --

    def _keep_books(self, meeting_id: str, work: Coroutine[Any, Any, None]) -> None:
        """Finish ended meeting ``meeting_id``'s bookkeeping (``work``) in the background; :meth:`finish_books`
        waits for it at shutdown (what a stop cuts short, :meth:`bookkeep_left` does at the next start)."""
        task = asyncio.create_task(work, name=f"meeting {meeting_id} bookkeeping")
        self._books[meeting_id] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self._books.get(meeting_id) is finished:
                del self._books[meeting_id]
            if not finished.cancelled() and finished.exception() is not None:
                log.error("meeting %s: its end's bookkeeping failed: %s", meeting_id, finished.exception())

        task.add_done_callback(done)

    async def bookkept(self, meeting_id: str) -> None:
        """Until meeting ``meeting_id``'s end bookkeeping running here is done (at once when none is)."""
        task = self._books.get(meeting_id)
        if task is not None:
            await asyncio.wait([task])

    async def finish_books(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` for the ended meetings' bookkeeping still running; cancel what is left (not marked
        done: the next start does what it did not, :meth:`bookkeep_left`)."""
        await finish_tasks(list(self._books.values()), timeout)

    async def bookkeep_left(self) -> list[str]:
        """Do the end's bookkeeping a stop cut short: each ended meeting not marked bookkept (and not being kept
        here) has its end (DECISION, then ENDED) told once more to the bookkeeping subscribers, with ``again`` in
        the data (each does only what is not done yet), then is marked; with replicas only under the meeting's
        lease, which the replica that ended it keeps until its own bookkeeping is marked. The ids done."""
        from board.room.subscribers import Bookkeeping

        keepers = [s for s in self.subscribers if isinstance(s, Bookkeeping)]
        done = []
        for row in await self.store.not_bookkept():
            meeting_id = str(row["id"])
            if meeting_id in self._books or meeting_id in self._runs:
                continue
            lease = self._leases.of(meeting_id) if self._leases is not None else None
            if lease is not None and not await lease.take():
                continue
            try:
                for event in await self._end_of(row):
                    for keeper in keepers:
                        try:
                            await keeper(event)
                        except Exception:  # as the meeting's own telling: logged, the others go on
                            log.exception("meeting %s: bookkeeping %s again failed", meeting_id, event.kind)
                await self.store.bookkept(meeting_id)
                log.info("meeting %s: its end's bookkeeping done (what a stop cut short, at this start)", meeting_id)
                done.append(meeting_id)
            finally:
                if lease is not None:
                    with contextlib.suppress(Exception):
                        await lease.release()
        return done

    async def retell_ended(self) -> list[str]:
        """At a start: the end of each meeting that ended in the last ``board.meetings.resume_within_s`` (by the
        machine's clock, which stamped its end) told once more to the displays that post from a record
        (:class:`board.room.subscribers.CatchesUp`): RESUMED (phase ``ended``), then its end as it told it
        (:meth:`_end_of`, ``again`` in the data). A ``kill -9`` can stop Sabha after a meeting ended and before a
        display posted all of it (Telegram's flood control keeps a forum's posts minutes behind a fast meeting):
        the display then posts what its record lacks (its topic's pointer, a statement, the decision, the minutes)
        and nothing it has. With replicas each meeting is told under its lease: by one replica. The ids told."""
        from board.room.meeting import MeetingEvent, MeetingEventKind
        from board.room.meeting.resume import Resumable
        from board.room.subscribers import AGAIN, CatchesUp

        displays = [s for s in self.subscribers
                    if isinstance(inner := getattr(s, "subscriber", s), CatchesUp) and inner.catches_up()]
        window = self.meeting_settings.resume_within_s
        if not displays or window <= 0:
            return []
        since = (datetime.now(UTC) - timedelta(seconds=window)).isoformat(timespec="seconds")
        told = []
        for row in await self.store.ended_since(since):
            meeting_id = str(row["id"])
            found = Resumable.of(row)
            if meeting_id in self._here or found.origin() is None:  # ended here: its displays heard it; or no
                continue  # display's (the terminal's)
            lease = self._leases.of(meeting_id) if self._leases is not None else None
            if lease is not None and not await lease.take():
                continue
            try:
                resumed = MeetingEvent(kind=MeetingEventKind.RESUMED, meeting_id=found.id, topic=found.topic,
                                       origin=found.origin(), role=str(row["chair"]), text="ended",
                                       data={"phase": "ended", AGAIN: True})
                for event in [resumed, *await self._end_of(row)]:
                    for display in displays:
                        try:
                            await display(event)
                        except Exception:  # as the meeting's own telling: logged, the others go on
                            log.exception("meeting %s: telling a display its %s again failed", meeting_id,
                                          event.kind)
                told.append(meeting_id)
            finally:
                if lease is not None:
                    with contextlib.suppress(Exception):
                        await lease.release()
        if told:
            log.info("meetings: told the displays the end of %d meeting(s) that ended before this start once more "
                     "(each posts what it had not): %s", len(told), ", ".join(told))
        return told

    async def _end_of(self, row: Any) -> list[MeetingEvent]:
        """The end (DECISION when it decided, then ENDED) of ended meeting ``row`` as it told it, for its
        bookkeeping again."""
        from board.room.meeting import MeetingEvent, MeetingEventKind
        from board.room.meeting.resume import Resumable
        from board.room.subscribers import AGAIN

        found, chair = Resumable.of(row), str(row["chair"])
        origin, decision = found.origin(), json.loads(row["decision"]) if row["decision"] else None
        common: dict[str, Any] = {"meeting_id": found.id, "topic": found.topic, "origin": origin, "role": chair}
        events = []
        if decision is not None:
            participants = [r for r in await self.store.present_roles(found.id) if r != chair]
            events.append(MeetingEvent(kind=MeetingEventKind.DECISION, text=str(decision.get("recommendation") or ""),
                                       data={"decision": decision, "participants": participants, AGAIN: True},
                                       **common))
        events.append(MeetingEvent(kind=MeetingEventKind.ENDED, text=str(row["stop_reason"] or ""),
                                   data={"stop_reason": row["stop_reason"], "error": row["error"],
                                         "minutes": row["minutes"], AGAIN: True}, **common))
        return events

    async def evidence(self, envelope: Envelope | None) -> tuple[Evidence, ...]:
        """The files a meeting called by ``envelope`` takes as evidence (see :mod:`board.room.evidence`)."""
        return await evidence_for(envelope, MediaStore(self.store.db))

    async def on_record(self, run: MeetingRun) -> None:
        """Until ``run`` is on record, where a later statement could overtake its first insert: on
        PostgreSQL a pool runs statements side by side (a /meetings right after /meeting listed nothing);
        SQLite's one connection runs them in order, and the meeting is not held up there."""
        if self.store.db.dialect is Dialect.POSTGRES:
            await run.recorded()

    def start(self, topic: str, *, envelope: Envelope | None = None, roster: str | None = None,
              evidence: tuple[Evidence, ...] = (), settings: MeetingSettings | None = None,
              agenda: str | None = None, revisit_of: str | None = None) -> MeetingRun:
        """Start a meeting in the background (one per chat/topic at a time), with ``evidence`` on its agenda;
        ``settings`` (rounds, mode) replace the board's for this meeting (the web's New meeting form);
        ``agenda``: set in advance, the chair does not frame it (a revisit's); ``revisit_of``: the decision
        it revisits, recorded with the meeting's row."""
        if settings is not None and not self.meeting_settings.enabled:
            raise ValueError(MEETINGS_OFF)
        self._free(_place(envelope))
        run = self.prepare(topic, envelope=envelope, roster=roster, settings=settings, agenda=agenda)
        run.m = replace(run.m, evidence=evidence, revisit_of=revisit_of)
        return self.launch(run)

    def launch(self, run: MeetingRun) -> MeetingRun:
        """Start prepared meeting ``run`` in the background, in the place of its envelope (one per chat/topic at a
        time: MeetingInProgress), resumed after a stop (a standing roundtable: :mod:`board.room.standing`)."""
        place = _place(run.m.base_ctx.envelope)
        self._free(place)
        run.m = replace(run.m, background=True)  # resumed after a stop
        task = asyncio.create_task(run.run(), name=f"meeting {run.id}")
        self._tasks[run.id] = task
        self._runs[run.id] = run
        self._places[place] = run.id
        task.add_done_callback(functools.partial(self._finished, run.id))
        return run

    def _free(self, place: tuple[str, str, int | None]) -> None:
        running = self._places.get(place)
        if running and running in self._tasks and not self._tasks[running].done():
            raise MeetingInProgress(f"meeting {running} is still running here; wait for its decision or /cancel it")

    # -- the cost before the meeting (board.room.estimate, board.room.pending) --

    async def estimate(self, *, roster: str | None = None, settings: MeetingSettings | None = None,
                       agenda: str | None = None, chair_role: str = GENERAL) -> Estimate:
        """What a meeting of ``roster`` with ``settings`` is expected to cost and take (no model is called): each
        member's model at its price (``llm.prices``), token counts from the ledger's recent meetings."""
        from board.room.estimate import Plan, Seat, estimate, token_history

        settings = settings or self.meeting_settings
        roster = roster or self.default_roster
        chair, specialists = self._participants(roster, chair_role)
        prices = self.runner.settings.prices

        def seat(profile: AgentProfile) -> Seat:
            model = self.runner.model_for(profile)
            return Seat(profile.role, profile.name, model, prices.price_of(model))

        plan = Plan(roster=roster, chair=seat(chair), members=tuple(seat(p) for p in specialists),
                    rounds=settings.max_turns_per_agent, parallel=settings.parallel, framed=agenda is None,
                    peer_review=settings.peer_review, challenger=settings.challenger_for(roster),
                    budget_usd=settings.budget_usd, max_duration_s=settings.max_duration_s)
        return estimate(plan, await token_history(self.store.db))

    async def call(self, request: StartRequest) -> MeetingCall:
        """Call a meeting as asked: its estimate, and the meeting started, or (estimate above
        ``board.meetings.confirm_over_usd``, a place to ask in) the request waiting for the owner's Start.
        MeetingInProgress or ValueError as :meth:`start`."""
        from board.room.pending import MeetingCall

        settings = self._settings_of(request)
        estimate = await self.estimate(roster=request.roster, settings=settings, agenda=request.agenda)
        if (self.gate is not None and request.envelope is not None
                and estimate.needs_start(self.meeting_settings.confirm_over_usd)):
            envelope = request.envelope
            waiting = await self.gate.park(request, estimate, Place(envelope.channel, envelope.chat_id,
                                                                    envelope.thread_id))
            return MeetingCall(estimate, waiting=waiting)
        return MeetingCall(estimate, run=self.begin(request))

    def _settings_of(self, request: StartRequest) -> MeetingSettings | None:
        if not self.meeting_settings.enabled:
            raise ValueError(MEETINGS_OFF)
        changes: dict[str, Any] = dict(request.overrides)
        return replace(self.meeting_settings, **changes) if changes else None

    def begin(self, request: StartRequest) -> MeetingRun:
        """Start the meeting ``request`` asks for, now (see :meth:`start`)."""
        return self.start(request.topic, envelope=request.envelope, roster=request.roster,
                          evidence=request.evidence, settings=self._settings_of(request), agenda=request.agenda,
                          revisit_of=request.revisit_of)

    async def press_start(self, start_id: int, *, by: str) -> str:
        """The owner's Start for waiting meeting ``start_id``: started once; what to say."""
        if self.gate is None:
            return "Meetings never wait for Start here."

        async def started(request: StartRequest) -> str:
            run = self.begin(request)
            await self.on_record(run)
            return run.id

        return await self.gate.press(start_id, by=by, start=started)

    def _finished(self, meeting_id: str, task: asyncio.Task[MeetingResult]) -> None:
        self._runs.pop(meeting_id, None)
        self._nudges.pop(meeting_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("meeting %s crashed: %s", meeting_id, task.exception())

    def place_of(self, meeting_id: str) -> tuple[str, str, int | None] | None:
        """(channel, chat_id, thread_id) a running meeting was started from."""
        for place, mid in self._places.items():
            if mid == meeting_id:
                return place
        return None

    def origin_of(self, meeting_id: str) -> tuple[str, str] | None:
        """(channel, chat_id) a running meeting was started from."""
        for (channel, chat_id, _thread), mid in self._places.items():
            if mid == meeting_id:
                return (channel, chat_id)
        return None

    def running(self) -> list[str]:
        """Ids of meetings still in progress."""
        return [mid for mid, task in self._tasks.items() if not task.done()]

    async def cancel(self, meeting_id: str) -> bool:
        """Cancel a running meeting (it is recorded with stop_reason cancelled)."""
        task = self._tasks.get(meeting_id)
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for background meetings to finish, their end's bookkeeping included (cancel what is left after
        ``timeout``)."""
        loop = asyncio.get_running_loop()
        until = None if timeout is None else loop.time() + timeout
        await finish_tasks(self._tasks.values(), timeout)
        await self.finish_books(None if until is None else max(0.0, until - loop.time()))

    async def ended(self, meeting_id: str) -> None:
        """Until background meeting ``meeting_id`` has returned (its end told to its displays; its bookkeeping may
        still run: :meth:`bookkept`); at once when it is not running here."""
        task = self._tasks.get(meeting_id)
        if task is not None:
            await asyncio.wait([task])

    # -- meetings that survive a restart (board.room.meeting.resume) --------------------

    async def suspend(self, timeout: float | None = None) -> None:
        """Sabha is stopping: wait up to ``timeout`` for running meetings to end, then stop the rest where they
        are. Their records stay running, with the checkpoint of their last finished phase, and the next start
        (or another replica) resumes them."""
        pending = [t for t in self._tasks.values() if not t.done()]
        if pending and timeout:
            await asyncio.wait(pending, timeout=timeout)
        for run in list(self._runs.values()):
            run.s.suspended = True
        await finish_tasks(self._tasks.values(), 0)
        await self.finish_books(timeout)  # an ended meeting's bookkeeping: what is cut short is done at the next start

    async def keep_running(self, leases: MeetingLeases | None, stop: asyncio.Event) -> None:
        """The daemon's side of surviving a restart, until ``stop``: resume every meeting left running (at
        once); with replicas (``leases``: this replica's, on PostgreSQL) also run new meetings under a lease,
        renew those held every heartbeat, stop working one whose lease another replica took, and every lease
        period take over the meetings whose replica died (their lease lapsed)."""
        from board.room.meeting.takeover import keep_running

        self._leases = leases
        await keep_running(self, leases, stop)

    async def resume_all(self) -> list[str]:
        """Resume every meeting still running on record that no process here runs (and, with replicas, whose
        lease is free or lapsed); the ids resumed or ended as interrupted."""
        try:  # the end's bookkeeping a stop cut short (tried again at the next look)
            await self.bookkeep_left()
        except Exception:
            log.exception("meetings: the end's bookkeeping left by a stop could not be done")
        done = []
        for row in await self.store.resumable():
            if row["id"] in self._runs:
                continue
            try:
                if await self.resume(row["id"]) is not None:
                    done.append(str(row["id"]))
            except Exception:  # one meeting that cannot be rebuilt must not keep the others
                log.exception("meeting %s: resuming failed", row["id"])
        return done

    async def resume(self, meeting_id: str) -> MeetingRun | None:
        """Resume running meeting ``meeting_id`` at its first unfinished phase, in the background (one older
        than ``board.meetings.resume_within_s`` ends as interrupted); None when it is not running on record, or
        another replica holds it."""
        from board.room.meeting.resume import Resumable, age_s

        if meeting_id in self._runs:
            return self._runs[meeting_id]
        rows = await self.store.resumable(meeting_id)
        if not rows:
            return None
        found = Resumable.of(rows[0])
        if found.spec and not found.spec.get("background"):  # its caller runs it (MCP, roundtable, a terminal)
            return None
        lease = self._leases.of(found.id) if self._leases is not None else None
        if lease is not None and not await lease.take():
            return None
        try:
            run = self._rebuild(found, lease)
            run.s.spent_usd = max(run.s.spent_usd, await self.store.spent(found.id))
        except Exception as exc:  # a roster or soul that is gone: nothing to resume with
            await self.store.finish(found.id, stop_reason="interrupted", cost_usd=0.0, decision=None, minutes=None,
                                    error=f"could not be resumed after a restart: {exc}")
            raise
        age = age_s(found.started_at, self.clock.now())
        limit = self.meeting_settings.resume_within_s
        if age >= limit:  # 0: a meeting never resumes
            why = (f"Sabha stopped during this meeting and it was not resumed: it started {age:.0f} s ago, more "
                   f"than board.meetings.resume_within_s ({limit:g} s)")
            work = run.interrupt(why)
        else:
            work = run.run()
        tag = await self._standing_tag(found.id)
        with spending_for_run(tag) if tag is not None else contextlib.nullcontext():  # its task inherits the tag
            self._hold_task(run, work)
        return run

    async def _standing_tag(self, meeting_id: str) -> RunTag | None:
        """The ledger's tag of a standing item's meeting (:mod:`board.room.standing`), for its calls after a
        resume; None for any other meeting."""
        row = await self.store.db.fetchone("SELECT item_id, label FROM standing_meetings WHERE meeting_id = ?",
                                           (meeting_id,))
        return RunTag(int(row["item_id"]), str(row["label"])) if row is not None else None

    def let_go(self, meeting_id: str) -> bool:
        """Stop working meeting ``meeting_id`` here without writing anything more (its lease went to another
        replica, which resumes it); False when this process does not run it."""
        run, task = self._runs.get(meeting_id), self._tasks.get(meeting_id)
        if run is None or task is None or task.done():
            return False
        run.s.suspended = True
        task.cancel()
        return True

    def leased(self) -> list[str]:
        """Ids of the meetings this process runs under a lease (replicas)."""
        return [mid for mid, run in self._runs.items() if run.m.lease is not None]

    def _rebuild(self, found: Resumable, lease: MeetingLease | None) -> MeetingRun:
        """The run of a stored meeting: its context rebuilt from its row, its state from its checkpoint."""
        from board.room.meeting.resume import restore, settings_of
        from board.room.meeting.state import MeetingState

        spec = found.spec
        prepared = self.prepare(found.topic, envelope=found.origin(), roster=found.roster,
                                settings=settings_of(spec.get("settings"), self.meeting_settings),
                                chair_role=found.chair, agenda=spec.get("preset_agenda"),
                                extra_owners=tuple(spec.get("extra_owners") or ()))
        prepared.m = replace(prepared.m, id=found.id, evidence=found.evidence(), revisit_of=spec.get("revisit_of"),
                             lease=lease, wake=functools.partial(self.nudged, found.id), background=True)
        if found.checkpoint is not None:
            prepared.s = restore(found.checkpoint)
        else:  # stopped before its framing was written: the record is open, the framing is asked (once)
            prepared.s = MeetingState(resumed=True, started_at=found.started_at, warnings=prepared.s.warnings)
            prepared.s.recorded.set()
        return prepared

    def _hold_task(self, run: MeetingRun, work: Coroutine[Any, Any, MeetingResult]) -> None:
        """Run ``work`` for ``run`` in the background, as :meth:`start` does."""
        task = asyncio.create_task(work, name=f"meeting {run.id}")
        self._here.add(run.id)
        self._tasks[run.id] = task
        self._runs[run.id] = run
        self._places[_place(run.m.base_ctx.envelope)] = run.id
        task.add_done_callback(functools.partial(self._finished, run.id))

    # -- tools -------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """The tools this room provides: consult and convene_meeting."""
        consult = self.consult.tool()
        return [Tool(consult.spec, self._consult, timeout_s=consult.timeout_s),
                Tool(_convene_spec(), self._convene, timeout_s=30, roles=(GENERAL,))]

    async def _convene(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.meeting_id:
            return ToolResult.failure("you are already in a board meeting; answer in it instead")
        if ctx.role != GENERAL:
            return ToolResult.failure("only the chair (general) can convene a board meeting; suggest it to the user")
        allowance = current_allowance.get()
        if allowance is not None and not allowance.terms.meetings:
            return ToolResult.failure("board meetings are not open to this user (a member of the public); answer "
                                      "their question yourself")
        from board.room.pending import StartRequest

        try:
            called = await self.call(StartRequest(str(args["topic"]), envelope=ctx.envelope,
                                                  evidence=await self.evidence(ctx.envelope)))
        except (MeetingInProgress, ValueError) as exc:
            return ToolResult.failure(str(exc))
        if called.waiting is not None:
            return ToolResult.success({
                "request": called.waiting.id, "status": "waiting for the owner's Start",
                "estimate": called.estimate.summary(),
                "note": f"The meeting has NOT started: its estimate is above the owner's threshold "
                        f"(${self.meeting_settings.confirm_over_usd:g}), so it waits for the owner to press Start "
                        "under the estimate just posted here (or to send /start_meeting "
                        f"{called.waiting.id}). Tell the user that, with the estimate; nothing is spent until then.",
            })
        assert called.run is not None
        run = called.run
        return ToolResult.success({
            "meeting_id": run.id, "status": "convened",
            "participants": [p.role for p in run.specialists],
            "evidence": [e.name for e in run.m.evidence],
            "estimate": called.estimate.summary(),
            "note": "The meeting runs now; statements and the decision are posted as they come. Tell the user it "
                    "has started, what it will cover and what it is expected to cost; do not invent its outcome.",
        })


def _convene_spec() -> ToolSpec:
    return ToolSpec(
        name=CONVENE_TOOL,
        description="Convene a board meeting of all specialists on a topic when the user asks for one "
        "(e.g. 'run a board meeting on expanding to Europe'). Returns at once; the meeting runs in the background.",
        parameters={
            "type": "object",
            "properties": {"topic": {"type": "string", "minLength": 3, "description": "What the board should decide."}},
            "required": ["topic"],
            "additionalProperties": False,
        },
    )


def _place(envelope: Envelope | None) -> tuple[str, str, int | None]:
    if envelope is None:
        return ("none", "none", None)
    return (envelope.channel, envelope.chat_id, envelope.thread_id)


def _find_role(souls: SoulStore, name: str) -> str | None:
    wanted = name.strip().lower().lstrip("@")
    for profile in souls.profiles():
        if wanted in (profile.role, profile.name.lower(), profile.name.lower().removeprefix("the ")):
            return profile.role
    return None

