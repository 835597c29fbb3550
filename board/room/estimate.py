"""What a meeting is expected to cost and take, said before it starts: :class:`Estimate`.

:func:`estimate` is pure: a :class:`Plan` (who sits where, on which model at which price, how many
rounds, the caps) and what earlier meetings used (:class:`TokenHistory`) in, a frozen :class:`Estimate` out.
Its calls: the chair's framing (none when the agenda is set in advance), one statement per member
per round (with ``peer_review`` one ranking each after round 1), the chair's synthesis and, beside it,
the challenger's review. Every call is priced at its model's price (``llm.prices``); a model with
no price leaves the figure unpriced, never guessed.

:func:`token_history` reads the ledger: the model calls of the last ``meetings`` meetings that ended with a
decision (completed or converged), split per phase: the chair's first call is its framing (when it
made more than one), its later calls the synthesis; a member's calls are its statements (a statement's
tool rounds and a stance asked again count with it), except that a member with more calls than
statements made the challenger's review last. Per phase (and per member role for statements) the
median input, output and cached tokens of one call and its median seconds are kept; a phase with no
history uses :data:`DEFAULT_TOKENS` / :data:`DEFAULT_SECONDS`, and the estimate says how many meetings
it learned from.

The time: the framing, then each round (in parallel the slowest member, else all members in turn),
then the synthesis or the challenger's review, whichever is slower; never above the meeting's
``max_duration_s``. The estimate is of a meeting that runs all its rounds: one that converges early
costs less.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from board.llm.base import Usage
from board.llm.pricing import ModelPrice
from board.storage import Database

__all__ = [
    "DEFAULT_SECONDS",
    "DEFAULT_TOKENS",
    "HISTORY_MEETINGS",
    "Estimate",
    "EstimateLine",
    "Phase",
    "Plan",
    "Seat",
    "TokenHistory",
    "Tokens",
    "estimate",
    "token_history",
]

#: how many recent meetings the ledger's history is read from
HISTORY_MEETINGS = 10


class Phase(StrEnum):
    """A kind of model call in a meeting."""

    FRAMING = "framing"  # the chair's agenda and questions
    STATEMENT = "statement"  # one member's statement in one round
    SYNTHESIS = "synthesis"  # the chair's decision
    CHALLENGE = "challenge"  # the challenger's review of the record, beside the synthesis


@dataclass(frozen=True)
class Tokens:
    """Tokens of one call: fresh input, output, input read from and written to the prompt cache."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0

    def usage(self, calls: int = 1) -> Usage:
        """``calls`` such calls as a :class:`Usage` (what the price table prices)."""
        return Usage(input_tokens=self.input * calls, output_tokens=self.output * calls,
                     cache_read_tokens=self.cache_read * calls, cache_write_tokens=self.cache_write * calls)


#: one call's tokens when no earlier meeting made such a call (a first meeting: a guess, said as such)
DEFAULT_TOKENS: Mapping[Phase, Tokens] = {
    Phase.FRAMING: Tokens(1800, 250),
    Phase.STATEMENT: Tokens(2500, 300),
    Phase.SYNTHESIS: Tokens(5000, 700),
    Phase.CHALLENGE: Tokens(3500, 150),
}
#: one call's seconds when no earlier meeting made such a call
DEFAULT_SECONDS: Mapping[Phase, float] = {
    Phase.FRAMING: 8.0, Phase.STATEMENT: 12.0, Phase.SYNTHESIS: 15.0, Phase.CHALLENGE: 8.0,
}


@dataclass(frozen=True)
class TokenHistory:
    """What earlier meetings used per call: median tokens and seconds by (phase, role); role "" for any."""

    meetings: int = 0
    tokens: Mapping[tuple[Phase, str], Tokens] = field(default_factory=dict)
    seconds: Mapping[tuple[Phase, str], float] = field(default_factory=dict)

    def per_call(self, phase: Phase, role: str = "") -> Tokens:
        """One call's tokens: the role's own history, else the phase's, else the default."""
        return self.tokens.get((phase, role)) or self.tokens.get((phase, "")) or DEFAULT_TOKENS[phase]

    def seconds_of(self, phase: Phase, role: str = "") -> float:
        """One call's seconds, the same way."""
        return self.seconds.get((phase, role)) or self.seconds.get((phase, "")) or DEFAULT_SECONDS[phase]


@dataclass(frozen=True)
class Seat:
    """One member of the meeting: role, name, model and its price (None: the model has no price)."""

    role: str
    name: str
    model: str
    price: ModelPrice | None


@dataclass(frozen=True)
class Plan:
    """The meeting as called: roster, chair, members, rounds and the caps."""

    roster: str
    chair: Seat
    members: tuple[Seat, ...]
    rounds: int
    parallel: bool = True
    framed: bool = True  # False: the agenda is set in advance (a revisit, a review): no framing call
    peer_review: bool = False
    challenger: str = ""  # the challenger's role ("" for none)
    budget_usd: float = 1.0
    max_duration_s: float = 600.0


@dataclass(frozen=True)
class EstimateLine:
    """One kind of call of one member: how many, the tokens of each, and their USD (None: unpriced)."""

    phase: Phase
    seat: Seat
    calls: int
    tokens: Tokens
    usd: float | None


@dataclass(frozen=True)
class Estimate:
    """What a meeting is expected to cost (USD) and take (seconds), with what it was worked out from."""

    plan: Plan
    lines: tuple[EstimateLine, ...]
    usd: float  # the priced calls' sum
    seconds: float
    learned_from: int  # how many earlier meetings the token counts come from (0: defaults)
    unpriced: tuple[str, ...] = ()  # models with no price (their calls are not in ``usd``)

    @property
    def calls(self) -> int:
        """Model calls expected."""
        return sum(line.calls for line in self.lines)

    @property
    def over_budget(self) -> bool:
        """The expected cost is above the meeting's budget (it would stop on the budget)."""
        return self.usd > self.plan.budget_usd

    def needs_start(self, confirm_over_usd: float) -> bool:
        """It waits for the owner's Start: ``confirm_over_usd`` is set (> 0) and the estimate is above it
        (or cannot be priced)."""
        return confirm_over_usd > 0 and (self.usd > confirm_over_usd or bool(self.unpriced))

    def summary(self) -> str:
        """One line: about $X and N minutes, for N calls, with the caps."""
        cost = f"about ${self.usd:.2f}" if self.usd >= 0.01 or self.usd == 0 else f"about ${self.usd:.4f}"
        if self.unpriced:
            cost += f" plus what {', '.join(self.unpriced)} costs (no price: add it under llm.prices)"
        return (f"Expected: {cost} and {_minutes(self.seconds)} for {self.calls} model calls "
                f"(caps: ${self.plan.budget_usd:g} and {_minutes(self.plan.max_duration_s)}).")

    def text(self) -> str:
        """The estimate as said where the meeting is called: roster, rounds, models and prices, tokens, caps."""
        plan = self.plan
        members = ", ".join(s.name for s in plan.members)
        lines = [f"Board: {plan.roster} roster, {plan.chair.name} chairing; {members}; "
                 f"{plan.rounds} round{'s' if plan.rounds != 1 else ''}"
                 f"{' in parallel' if plan.parallel else ' in turn'}.", self.summary()]
        for model, price in _models(plan):
            rate = (f"${price.input:g} in / ${price.output:g} out per million tokens" if price is not None
                    else "no price")
            lines.append(f"- {model}: {rate}")
        learned = (f"from the last {self.learned_from} meeting{'s' if self.learned_from != 1 else ''}"
                   if self.learned_from else "defaults (no earlier meeting to learn from)")
        per_phase = "; ".join(f"{phase.value} {_tokens(tokens)}" for phase, tokens in _by_phase(self.lines))
        lines.append(f"Tokens per call, {learned}: {per_phase}.")
        if self.over_budget:
            lines.append(f"That is above the ${plan.budget_usd:g} budget: the meeting stops there and decides on "
                         "what was said (board.meetings.budget_usd).")
        return "\n".join(lines)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _tokens(tokens: Tokens) -> str:
    cached = f" (+{tokens.cache_read} cached)" if tokens.cache_read else ""
    return f"{tokens.input} in{cached} / {tokens.output} out"


def _models(plan: Plan) -> list[tuple[str, ModelPrice | None]]:
    seen: dict[str, ModelPrice | None] = {}
    for seat in (plan.chair, *plan.members):
        seen.setdefault(seat.model, seat.price)
    return list(seen.items())


def _by_phase(lines: Sequence[EstimateLine]) -> list[tuple[Phase, Tokens]]:
    """The median call of each phase present (what the text shows)."""
    out = []
    for phase in Phase:
        mine = [line.tokens for line in lines if line.phase is phase]
        if mine:
            out.append((phase, _median_tokens(mine)))
    return out


def _line(phase: Phase, seat: Seat, calls: int, learned_: TokenHistory, role: str = "") -> EstimateLine:
    tokens = learned_.per_call(phase, role)
    usd = seat.price.cost(tokens.usage(calls)) if seat.price is not None else None
    return EstimateLine(phase, seat, calls, tokens, usd)


def estimate(plan: Plan, history: TokenHistory) -> Estimate:
    """The cost and time of ``plan`` from ``history`` (pure)."""
    lines: list[EstimateLine] = []
    if plan.framed:
        lines.append(_line(Phase.FRAMING, plan.chair, 1, history))
    for seat in plan.members:
        statements = plan.rounds + (1 if plan.peer_review and plan.rounds >= 1 else 0)
        lines.append(_line(Phase.STATEMENT, seat, statements, history, seat.role))
    lines.append(_line(Phase.SYNTHESIS, plan.chair, 1, history))
    challenger = next((s for s in plan.members if s.role == plan.challenger), None)
    if challenger is not None:
        lines.append(_line(Phase.CHALLENGE, challenger, 1, history))
    usd = sum(line.usd for line in lines if line.usd is not None)
    unpriced = tuple(sorted({line.seat.model for line in lines if line.usd is None}))
    return Estimate(plan=plan, lines=tuple(lines), usd=round(usd, 6), seconds=_seconds(plan, history),
                    learned_from=history.meetings, unpriced=unpriced)


def _seconds(plan: Plan, history: TokenHistory) -> float:
    each = [history.seconds_of(Phase.STATEMENT, s.role) for s in plan.members] or [0.0]
    per_round = max(each) if plan.parallel else sum(each)
    total = (history.seconds_of(Phase.FRAMING) if plan.framed else 0.0) + per_round * plan.rounds
    ending = history.seconds_of(Phase.SYNTHESIS)
    if plan.challenger and any(s.role == plan.challenger for s in plan.members):
        ending = max(ending, history.seconds_of(Phase.CHALLENGE))
    return min(total + ending, plan.max_duration_s)


# -- the ledger's history -----------------------------------------------------------------------------


def _median_tokens(samples: Sequence[Tokens]) -> Tokens:
    return Tokens(*(round(statistics.median(getattr(t, f) for t in samples))
                    for f in ("input", "output", "cache_read", "cache_write")))


@dataclass
class _Samples:
    tokens: dict[tuple[Phase, str], list[Tokens]] = field(default_factory=lambda: defaultdict(list))
    seconds: dict[tuple[Phase, str], list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, phase: Phase, role: str, rows: Sequence[Mapping[str, Any]], per: int = 1) -> None:
        """The calls ``rows`` as ``per`` calls of ``phase`` (their sum divided), under ``role`` and under ""."""
        if not rows or per <= 0:
            return
        tokens = Tokens(*(round(sum(int(r[c] or 0) for r in rows) / per)
                          for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")))
        seconds = sum(float(r["latency_ms"] or 0.0) for r in rows) / 1000 / per
        for key in {(phase, role), (phase, "")}:
            self.tokens[key].append(tokens)
            self.seconds[key].append(seconds)


def _split(samples: _Samples, chair: str, rows: Sequence[Mapping[str, Any]], said: Mapping[str, int]) -> None:
    """One meeting's calls into the phases (see the module docstring)."""
    by_role: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_role[str(row["role"] or "")].append(row)
    chair_rows = by_role.pop(chair, [])
    if len(chair_rows) > 1:
        samples.add(Phase.FRAMING, "", chair_rows[:1])
        chair_rows = chair_rows[1:]
    samples.add(Phase.SYNTHESIS, "", chair_rows)
    for role, mine in by_role.items():
        statements = said.get(role, 0)
        if statements and len(mine) > statements:
            samples.add(Phase.CHALLENGE, "", mine[-1:])
            mine = mine[:-1]
        samples.add(Phase.STATEMENT, role, mine, per=statements)


async def token_history(db: Database, *, meetings: int = HISTORY_MEETINGS) -> TokenHistory:
    """Median tokens and seconds per call of the last ``meetings`` meetings that ended with a decision."""
    recent = await db.fetchall(
        "SELECT id, chair FROM meetings WHERE status = 'ended' AND stop_reason IN ('completed', 'converged') "
        "AND decision IS NOT NULL ORDER BY ended_at DESC, started_at DESC LIMIT ?", (meetings,))
    if not recent:
        return TokenHistory()
    ids = [str(r["id"]) for r in recent]
    marks = ", ".join("?" for _ in ids)
    calls = await db.fetchall(
        "SELECT meeting_id, role, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, latency_ms "
        f"FROM llm_calls WHERE meeting_id IN ({marks}) AND purpose = 'meeting' AND outcome = 'ok' ORDER BY id",
        tuple(ids))
    counts = await db.fetchall(
        f"SELECT meeting_id, role, COUNT(*) AS n FROM meeting_statements WHERE meeting_id IN ({marks}) "
        "GROUP BY meeting_id, role", tuple(ids))
    said: dict[str, dict[str, int]] = defaultdict(dict)
    for row in counts:
        said[str(row["meeting_id"])][str(row["role"])] = int(row["n"])
    rows: dict[str, list[Any]] = defaultdict(list)
    for row in calls:
        rows[str(row["meeting_id"])].append(row)
    samples = _Samples()
    for meeting in recent:
        mid = str(meeting["id"])
        _split(samples, str(meeting["chair"]), rows[mid], said[mid])
    return TokenHistory(
        meetings=sum(1 for m in recent if rows[str(m["id"])]),
        tokens={key: _median_tokens(values) for key, values in samples.tokens.items()},
        seconds={key: statistics.median(values) for key, values in samples.seconds.items()},
    )

