"""A meeting as the web page shows it: one neutral view model, built from its events.

:class:`MeetingView` is folded from :class:`board.room.meeting.MeetingEvent` values in order
(:meth:`MeetingView.apply`): who sits in, what each said (statements, numbered by the event's
feed sequence), each advisor's latest stance and confidence, the scoreboard (disagreements and
consensus as the tools log them), the decision with dissent and action items, and the phase.
The same fold serves the first render of the page and each live update, so a page opened
halfway and a page that watched from the start show the same thing. The sequence is the one the
meeting's Telegram thread shows: statements in speaking order, who is speaking now (the phase),
what people at the table wrote in (contributions, :class:`SaidKind`), the controls the meeting
applied (paused, wrapping up ...), a resume after a restart, the decision.

A meeting that is no longer in the live feed (older, or from before this start) is rebuilt from
the state db by :func:`events_from_record` into the same events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, get_args

from board.room.decision import Position
from board.room.meeting.events import MeetingEvent, MeetingEventKind
from board.room.meeting.scoreboard import CONSENSUS_SPEC, DISAGREEMENT_SPEC
from board.room.store import MeetingRow
from board.room.table import ControlKind

__all__ = ["ELSEWHERE", "POSITIONS", "MeetingView", "Region", "SaidKind", "ScoreItem", "StanceView", "StatementView",
           "events_from_record"]


#: The stances a member may take (the board's :data:`board.room.decision.Position`), in the legend's order.
POSITIONS: tuple[str, ...] = get_args(Position)


def _top(spec: Any, name: str) -> int:
    """The highest value of a scoreboard tool's ``name`` argument: the scale the board asks the members for."""
    return int(spec.parameters["properties"][name]["maximum"])


class Region(StrEnum):
    """The parts of the live page an event may change (each is re-rendered whole)."""

    PHASE = "phase"
    AGENDA = "agenda"
    STANCES = "stances"
    SCOREBOARD = "scoreboard"
    DECISION = "decision"


@dataclass(frozen=True)
class StanceView:
    """Where an advisor stands: support / oppose / conditional, with a confidence 0..1."""

    position: str
    confidence: float
    assumption: str

    @property
    def percent(self) -> int:
        """The confidence in whole percent."""
        return round(self.confidence * 100)


class SaidKind(StrEnum):
    """What an item of the meeting's sequence is."""

    STATEMENT = "statement"  # a member's statement (or the challenger's objection)
    CONTRIBUTION = "contribution"  # someone at the table wrote into the meeting
    CONTROL = "control"  # the meeting applied a control: paused, resumed, wrapping up, extended, cancelled
    RESUMED = "resumed"  # the meeting went on after a restart


@dataclass(frozen=True)
class StatementView:
    """One item of the meeting's sequence: a statement, the challenger's objection, a contribution, a control."""

    seq: int
    round: int | None
    role: str
    label: str
    text: str
    stance: StanceView | None = None
    objection: bool = False
    kind: SaidKind = SaidKind.STATEMENT
    via: str = ""  # a contribution's channel (web, terminal, telegram ...)
    to: str = ""  # the member a contribution addresses (its label), "" for everyone


@dataclass(frozen=True)
class ScoreItem:
    """One line of the scoreboard: a logged disagreement or consensus."""

    seq: int
    kind: str  # "disagreement" | "consensus"
    who: str
    text: str
    weight: int  # severity (disagreement) or strength (consensus), 1..top
    top: int  # the top of that scale (the scoreboard tool's maximum)


def _stance(data: Any) -> StanceView | None:
    if not isinstance(data, dict) or "position" not in data:
        return None
    try:
        return StanceView(str(data["position"]), float(data.get("confidence") or 0), str(data.get("assumption") or ""))
    except (TypeError, ValueError):
        return None


#: Added to the phase of a meeting this replica draws from the record while another replica runs it.
ELSEWHERE = " (on another replica)"

#: The stored events of the owner at the table (:mod:`board.room.meeting.seat`), placed among the statements.
TABLE_KINDS = (MeetingEventKind.CONTRIBUTION.value, MeetingEventKind.CONTROL.value)

#: How the sequence says a control the meeting applied (``by`` is who gave it).
CONTROL_WORDS = {
    ControlKind.WRAP: "{by} asked to wrap up: the meeting ends after this round and goes to the decision",
    ControlKind.PAUSE: "{by} paused the meeting: no new round starts until it is resumed",
    ControlKind.RESUME: "{by} resumed the meeting",
    ControlKind.EXTEND: "{by} added one more round",
    ControlKind.CANCEL: "{by} cancelled the meeting",
}
#: The phase while a control holds.
CONTROL_PHASES = {ControlKind.WRAP: "wrapping up after round {round}", ControlKind.PAUSE: "paused",
                  ControlKind.CANCEL: "cancelling"}


def _field(data: dict[str, Any], name: str) -> str:
    """``data[name]``, else that field of a contribution sent whole as ``data["contribution"]`` ("" if none)."""
    value = data.get(name)
    whole = data.get("contribution")
    if value is None and isinstance(whole, dict):
        value = whole.get(name)
    elif value is None and whole is not None:
        value = getattr(whole, name, None)
    return "" if value is None else str(value)


@dataclass
class MeetingView:
    """See the module docstring."""

    meeting_id: str
    topic: str = ""
    phase: str = "starting"
    ended: bool = False
    stop_reason: str | None = None
    error: str | None = None
    agenda: str = ""
    round: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    participants: list[str] = field(default_factory=list)
    statements: list[StatementView] = field(default_factory=list)
    stances: dict[str, StanceView] = field(default_factory=dict)
    spoke: dict[str, int] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    scoreboard: list[ScoreItem] = field(default_factory=list)
    decision: dict[str, Any] | None = None
    minutes: str = ""
    warnings: list[str] = field(default_factory=list)
    last_seq: int = 0
    speaking: list[str] = field(default_factory=list)  # the members speaking now (SPEAKING, until they spoke)
    held: str = ""  # the phase a control holds the meeting in (paused, wrapping up), "" when none
    #: Drawn from the stored record (:func:`events_from_record`), not this process's live feed: a live page of
    #: it follows the record (``/events?source=record``), numbered as the record is.
    from_record: bool = False

    @property
    def disagreements(self) -> int:
        """How many disagreements were logged."""
        return sum(1 for s in self.scoreboard if s.kind == "disagreement")

    @property
    def consensus(self) -> int:
        """How many consensus points were logged."""
        return sum(1 for s in self.scoreboard if s.kind == "consensus")

    @property
    def positions(self) -> tuple[str, ...]:
        """The stances a member may take (:data:`POSITIONS`), for the stance table's legend."""
        return POSITIONS

    def label(self, role: str | None) -> str:
        """``🦉 Critic`` for a role (the role itself when its name is unknown)."""
        return self.labels.get(role or "", role or "the board")

    def apply(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        """Fold one event in; the statement it adds (if any) and the regions it changed."""
        self.last_seq = max(self.last_seq, seq)
        self.topic = self.topic or e.topic
        if e.round:
            self.round = max(self.round, e.round)
        if e.role and e.name:
            self.labels[e.role] = f"{e.emoji or ''} {e.name}".strip()
        kind = MeetingEventKind(e.kind)
        handler = _HANDLERS.get(kind)
        return handler(self, seq, e) if handler else (None, {Region.PHASE})

    def _started(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        self.participants = [str(r) for r in e.data.get("participants") or []]
        self.warnings = [str(w) for w in e.data.get("warnings") or []]
        self.phase = "the chair frames the question"
        return None, {Region.PHASE, Region.STANCES, Region.AGENDA}

    def _framed(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        self.agenda = e.text
        self.phase = "round 1: the advisors answer"
        return None, {Region.PHASE, Region.AGENDA}

    def _spoke(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        role = e.role or "?"
        stance = _stance(e.data.get("stance"))
        if stance is not None:
            self.stances[role] = stance
        self.spoke[role] = self.spoke.get(role, 0) + 1
        if role not in self.participants:
            self.participants.append(role)
        text = str(e.data.get("statement") or e.text)
        said = StatementView(seq, e.round, role, self.label(role), text, stance)
        self.statements.append(said)
        self._done_speaking(role)
        return said, {Region.PHASE, Region.STANCES}

    def _absent(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        self.absent[e.role or "?"] = e.text
        self._done_speaking(e.role or "?")
        return None, {Region.STANCES, Region.PHASE}

    def _round_phase(self) -> str:
        base = self.held or f"round {self.round}: the advisors answer"
        if self.speaking:
            names = ", ".join(self.label(r) for r in self.speaking)
            return f"{base} · {names} {'is' if len(self.speaking) == 1 else 'are'} speaking"
        return base

    def _done_speaking(self, role: str) -> None:
        if role in self.speaking:
            self.speaking.remove(role)
        self.phase = self._round_phase()

    def _speaking(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        role = e.role or "?"
        if role not in self.speaking:
            self.speaking.append(role)
        self.phase = self._round_phase()
        return None, {Region.PHASE}

    def _contribution(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        addressed = _field(e.data, "addressed")
        said = StatementView(seq, e.round, "", _field(e.data, "name") or "someone at the table",
                             _field(e.data, "said") or e.text, kind=SaidKind.CONTRIBUTION,
                             via=_field(e.data, "via"), to=self.label(addressed) if addressed else "")
        self.statements.append(said)
        return said, set()

    def _control(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        try:
            kind: ControlKind | None = ControlKind(_field(e.data, "control") or _field(e.data, "kind"))
        except ValueError:
            kind = None
        by = _field(e.data, "by") or "the owner"
        text = CONTROL_WORDS[kind].format(by=by) if kind is not None else (e.text or "a control was applied")
        if e.data.get("refused") or kind is None:
            pass  # "not extended", "already paused": nothing changed
        elif kind is ControlKind.RESUME or (kind is ControlKind.EXTEND and self.held.startswith("wrapping")):
            self.held = ""
        elif kind in CONTROL_PHASES:
            self.held = CONTROL_PHASES[kind].format(round=e.round or self.round)
        self.phase = self._round_phase()
        said = StatementView(seq, e.round, "", by, e.text or _field(e.data, "text") or text, kind=SaidKind.CONTROL)
        self.statements.append(said)
        return said, {Region.PHASE}

    def _resumed(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        where = _field(e.data, "phase")
        text = (f"Sabha restarted; the meeting goes on at {where}: nothing already said is asked again" if where
                else e.text or "Sabha restarted; the meeting goes on")
        said = StatementView(seq, e.round, "", "Sabha", text, kind=SaidKind.RESUMED)
        self.statements.append(said)
        self.speaking.clear()
        return said, {Region.PHASE}

    def _score(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        if e.kind == MeetingEventKind.DISAGREEMENT:
            target = self.label(str(e.data.get("target") or "")) if e.data.get("target") else "?"
            text = f"disagrees with {target} on {e.data.get('topic') or '?'}"
            reason = str(e.data.get("reasoning") or "")
            item = ScoreItem(seq, "disagreement", self.label(e.role), text + (f": {reason}" if reason else ""),
                             int(e.data.get("severity") or 0), _top(DISAGREEMENT_SPEC, "severity"))
        else:
            who = ", ".join(self.label(str(p)) for p in e.data.get("participants") or [])
            item = ScoreItem(seq, "consensus", self.label(e.role), f"consensus on {e.data.get('topic') or '?'}"
                             + (f" ({who})" if who else ""), int(e.data.get("strength") or 0),
                             _top(CONSENSUS_SPEC, "strength"))
        self.scoreboard.append(item)
        return None, {Region.SCOREBOARD}

    def _round_done(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        self.phase = e.text or f"round {self.round} done"
        return None, {Region.PHASE}

    def _objection(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        said = StatementView(seq, e.round, e.role or "?", self.label(e.role), e.text, objection=True)
        self.statements.append(said)
        self.phase = "the challenger reviews the draft decision"
        return said, {Region.PHASE}

    def _decision(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        self.speaking.clear()
        decision = e.data.get("decision")
        self.decision = dict(decision) if isinstance(decision, dict) else {"recommendation": e.text}
        self.phase = "decided"
        return None, {Region.PHASE, Region.DECISION}

    def _ended(self, seq: int, e: MeetingEvent) -> tuple[StatementView | None, set[Region]]:
        self.ended = True
        self.speaking.clear()
        self.stop_reason = str(e.data.get("stop_reason") or e.text or "ended")
        self.error = str(e.data["error"]) if e.data.get("error") else None
        self.minutes = str(e.data.get("minutes") or "")
        self.phase = f"ended ({self.stop_reason})" + (f": {self.error}" if self.error else "")
        return None, {Region.PHASE, Region.DECISION}


_HANDLERS = {
    MeetingEventKind.STARTED: MeetingView._started,
    MeetingEventKind.FRAMED: MeetingView._framed,
    MeetingEventKind.SPEAKING: MeetingView._speaking,
    MeetingEventKind.AGENT_SPOKE: MeetingView._spoke,
    MeetingEventKind.CONTRIBUTION: MeetingView._contribution,
    MeetingEventKind.CONTROL: MeetingView._control,
    MeetingEventKind.RESUMED: MeetingView._resumed,
    MeetingEventKind.ABSENT: MeetingView._absent,
    MeetingEventKind.DISAGREEMENT: MeetingView._score,
    MeetingEventKind.CONSENSUS: MeetingView._score,
    MeetingEventKind.ROUND_DONE: MeetingView._round_done,
    MeetingEventKind.OBJECTION: MeetingView._objection,
    MeetingEventKind.DECISION: MeetingView._decision,
    MeetingEventKind.ENDED: MeetingView._ended,
}


def events_from_record(row: MeetingRow, details: dict[str, Any]) -> list[MeetingEvent]:
    """A stored meeting as the events it emitted (near enough for its page): start, agenda,
    statements with stances, the scoreboard, the contributions and controls the meeting took in (between the
    rounds it took them in between), decision and end. A later reading of a meeting still running begins with
    an earlier one (the record stream relies on it: :mod:`bot.web.meeting_stream`)."""

    def event(kind: MeetingEventKind, **kw: Any) -> MeetingEvent:
        return MeetingEvent(kind=kind, meeting_id=row.id, topic=row.topic, **kw)

    roles = [p["role"] for p in details.get("participants", []) if p.get("role") != row.chair]
    out = [event(MeetingEventKind.STARTED, role=row.chair, text=row.topic, data={"participants": roles})]
    if row.agenda:
        out.append(event(MeetingEventKind.FRAMED, role=row.chair, text=row.agenda, round=1))
    scored = [e for e in details.get("events", []) if e.get("kind") in ("disagreement", "consensus")]
    waiting = [e for e in details.get("events", []) if e.get("kind") in TABLE_KINDS]

    def taken_in_before(round_no: int | None) -> None:
        """The table's events the meeting took in before round ``round_no`` began (None: all that are left): a
        control is stored with the round it followed, a contribution with the round that hears it."""
        while waiting:
            e = waiting[0]
            at = (e.get("round") or 0) + (0.5 if e.get("kind") == MeetingEventKind.CONTROL.value else -0.5)
            if round_no is not None and at > round_no:
                return
            waiting.pop(0)
            out.append(event(MeetingEventKind(e["kind"]), role=e.get("role"), round=e.get("round"),
                             text=str(e["data"].get("text") or ""), data=dict(e["data"])))

    for s in details.get("statements", []):
        taken_in_before(int(s["round"]))
        out.append(event(MeetingEventKind.AGENT_SPOKE, role=s["role"], round=s["round"], text=s["text"],
                         data={"statement": s["text"], "stance": s.get("stance")}))
        for e in [e for e in scored if e.get("round") == s["round"] and e.get("role") == s["role"]]:
            scored.remove(e)
            out.append(event(MeetingEventKind(e["kind"]), role=e["role"], round=e["round"], data=dict(e["data"])))
    taken_in_before(None)
    if row.status == "ended":  # a stance whose statement never came (the member failed); while the meeting runs
        # it waits for its statement: stored first (the scoreboard is called mid-statement), placed at the end it
        # would move under its statement on the next reading, and a stream following the record would reload
        out += [event(MeetingEventKind(e["kind"]), role=e["role"], round=e["round"], data=dict(e["data"]))
                for e in scored]
    if row.decision:
        out.append(event(MeetingEventKind.DECISION, role=row.chair, text=str(row.decision.get("recommendation", "")),
                         data={"decision": row.decision}))
    if row.status == "ended":
        out.append(event(MeetingEventKind.ENDED, role=row.chair, text=row.stop_reason or "ended",
                         data={"stop_reason": row.stop_reason, "error": row.error, "minutes": row.minutes}))
    return out
