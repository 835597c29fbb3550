"""What a stranger may cost: spending limits checked before every model call.

A channel open to anyone (WhatsApp's public mode) gives the board its :class:`PublicTerms`:
the channel's daily cap on what strangers cost (``whatsapp.public_daily_usd``) and whether
strangers may convene board meetings (``whatsapp.public_meetings``, off by default). While
the board answers a stranger (an envelope with ``is_public``), :data:`current_allowance`
holds the :class:`Limit` objects that apply: the channel's public cap, and
``budget.per_sender_daily_usd`` and ``budget.daily_usd`` when they are set.

Every model call made for that message (the turn and its tool rounds, consultations,
summaries, a meeting it started: tasks inherit the context) first reserves its worst case
with :meth:`SpendGate.reserve`: the prompt's estimated tokens at the input price plus
``max_tokens`` at the output price. When today's spend plus this reservation would pass a
limit, the call is not made (:class:`SpendRefused`) and the sender gets the limit's polite
line; the calls in flight are counted at their worst case too, so together they stay under.
When it would fit once the calls in flight are recorded (their real cost is usually far
below their worst case), it waits for them instead. A limit that refused a call stays closed
until midnight UTC (or until a reload changes it), so the day's spend stays under it and
later strangers are refused at the door without a model call.

Each call is recorded in the ledger with its ``scope`` (``public:<channel>``), so the day's
public spend survives a restart. A model with no price cannot be counted: its calls are let
through and that is logged once per model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Literal

from board.llm.base import LLMRequest
from board.llm.pricing import PriceTable
from board.llm.tokens import MESSAGE_OVERHEAD, estimate_tokens
from board.llm.vision import image_count, image_tokens
from board.spending.ledger import Ledger, LLMCallRecord, start_of_day

__all__ = [
    "MEETINGS_CLOSED",
    "PUBLIC_CAP_REACHED",
    "Allowance",
    "Limit",
    "LimitKind",
    "PublicTerms",
    "Reservation",
    "SpendGate",
    "SpendRefused",
    "allowed",
    "current_allowance",
    "public_scope",
    "worst_case",
]

log = logging.getLogger("sabha.budget")

PUBLIC_CAP_REACHED = "The board has reached today's limit for public questions. Please try again tomorrow."
MEETINGS_CLOSED = ("Board meetings are open to the board's own members only here. Ask your question and an "
                   "advisor will answer it.")

LimitKind = Literal["public", "sender", "daily"]
#: Prompts are estimated at about 4 characters a token; real tokenizers may count more.
PROMPT_MARGIN = 1.25


def public_scope(channel: str) -> str:
    """How the ledger marks the model calls strangers cause on ``channel``."""
    return f"public:{channel}"


@dataclass(frozen=True)
class PublicTerms:
    """What a channel open to anyone allows strangers (its owner's config)."""

    channel: str
    daily_usd: float
    meetings: bool = False
    cap_text: str = PUBLIC_CAP_REACHED
    meetings_text: str = MEETINGS_CLOSED

    @property
    def scope(self) -> str:
        """How the ledger marks the model calls strangers cause here."""
        return public_scope(self.channel)


@dataclass(frozen=True)
class Limit:
    """One daily limit: ``key`` is the scope (public), the sender (sender) or ``*`` (daily)."""

    kind: LimitKind
    key: str
    usd: float
    text: str  # what the sender is told when it is reached

    @property
    def ident(self) -> tuple[LimitKind, str]:
        """What the gate counts this limit's spend under."""
        return (self.kind, self.key)


@dataclass(frozen=True)
class Allowance:
    """The limits the model calls made now are held to, and the terms they come from."""

    terms: PublicTerms
    limits: tuple[Limit, ...]


#: The allowance of the message being answered (None: the owner's or a listed member's: no per-call check).
current_allowance: ContextVar[Allowance | None] = ContextVar("sabha_current_allowance", default=None)


@contextlib.contextmanager
def allowed(allowance: Allowance | None) -> Iterator[None]:
    """Hold the model calls made inside the block (and in tasks it starts) to ``allowance``."""
    token = current_allowance.set(allowance)
    try:
        yield
    finally:
        current_allowance.reset(token)


class SpendRefused(Exception):
    """A model call was not made: it could take the day's spend past ``limit``."""

    def __init__(self, limit: Limit, spent: float, reserved: float, estimate: float) -> None:
        super().__init__(f"{limit.kind} limit ${limit.usd:.2f} ({limit.key}): spent ${spent:.4f}, "
                         f"${reserved:.4f} reserved by calls in flight, this call up to ${estimate:.4f}")
        self.limit = limit

    @property
    def text(self) -> str:
        """What the sender is told."""
        return self.limit.text


@dataclass
class Reservation:
    """A call's worst case, held until it is recorded; :meth:`release` once it is."""

    gate: SpendGate
    idents: tuple[tuple[LimitKind, str], ...]
    usd: float
    released: bool = False

    def release(self) -> None:
        """The call is recorded (or was never made): stop holding its worst case."""
        if not self.released:
            self.released = True
            self.gate._unreserve(self.idents, self.usd)


@dataclass
class _Day:
    day: date
    spent: dict[tuple[LimitKind, str], float] = field(default_factory=dict)  # loaded limits only
    closed: dict[tuple[LimitKind, str], float] = field(default_factory=dict)  # -> the limit refused
    loaded: set[tuple[LimitKind, str]] = field(default_factory=set)


class SpendGate:
    """See the module docstring. Plugged into ``ledger`` as an observer, so it counts what every call cost."""

    def __init__(self, ledger: Ledger, *, clock: Callable[[], datetime] | None = None) -> None:
        self.ledger = ledger
        self.clock = clock or (lambda: datetime.now(UTC))
        self.refused = 0
        self._today = _Day(self._date())
        self._reserved: dict[tuple[LimitKind, str], float] = {}
        self._released = asyncio.Event()
        self._loading = asyncio.Lock()
        self._unpriced: set[str] = set()
        ledger.observers.append(self.observe)

    def _date(self) -> date:
        return self.clock().astimezone(UTC).date()

    def _day(self) -> _Day:
        today = self._date()
        if today != self._today.day:
            self._today = _Day(today)
        return self._today

    async def _load(self, limit: Limit) -> float:
        """Today's spend under ``limit`` (read from the ledger once a day, then counted here)."""
        day = self._day()
        if limit.ident not in day.loaded:
            async with self._loading:  # one read per limit; others wait for it
                if limit.ident not in day.loaded:
                    day.spent[limit.ident] = 0.0  # from now on observe() counts new calls (one racing the
                    since = start_of_day(self.clock())  # read may be counted twice: never too little)
                    if limit.kind == "public":
                        base = await self.ledger.spent(since=since, scope=limit.key)
                    elif limit.kind == "sender":
                        base = await self.ledger.spent(since=since, sender=limit.key)
                    else:
                        base = await self.ledger.spent(since=since)
                    day.spent[limit.ident] += base
                    day.loaded.add(limit.ident)
        return day.spent[limit.ident]

    async def reserve(self, usd: float | None, *, model: str = "") -> Reservation | None:
        """Hold a call's worst case (``usd``; None: the model has no price) against the limits of
        :data:`current_allowance`; None when there are none. When it fits only once calls in flight
        are recorded, it waits for them; when it cannot fit at all, raises :class:`SpendRefused`."""
        allowance = current_allowance.get()
        if allowance is None or not allowance.limits:
            return None
        if usd is None:
            self._warn_unpriced(model)
            usd = 0.0
        while True:
            for limit in allowance.limits:
                await self._load(limit)
            # from here to the reservation (or the wait) nothing awaits: no other call can slip in between
            day = self._day()
            waiting = False
            for limit in allowance.limits:
                spent, reserved = day.spent[limit.ident], self._reserved.get(limit.ident, 0.0)
                if day.closed.get(limit.ident) == limit.usd or spent + usd > limit.usd:
                    self._close(day, limit, spent, reserved, usd)
                    raise SpendRefused(limit, spent, reserved, usd)
                waiting = waiting or spent + reserved + usd > limit.usd
            if not waiting:
                idents = tuple(limit.ident for limit in allowance.limits)
                for ident in idents:
                    self._reserved[ident] = self._reserved.get(ident, 0.0) + usd
                return Reservation(self, idents, usd)
            self._released.clear()
            await self._released.wait()  # a call in flight was recorded: its real cost may leave room

    async def check(self) -> SpendRefused | None:
        """Why no model may be called now for :data:`current_allowance`: a limit refused a call
        today or is spent (None: calls may go, each still reserving its worst case)."""
        allowance = current_allowance.get()
        for limit in allowance.limits if allowance is not None else ():
            spent = await self._load(limit)
            day = self._day()
            if day.closed.get(limit.ident) == limit.usd or spent >= limit.usd:
                reserved = self._reserved.get(limit.ident, 0.0)
                self._close(day, limit, spent, reserved, 0.0)
                return SpendRefused(limit, spent, reserved, 0.0)
        return None

    def _warn_unpriced(self, model: str) -> None:
        if model not in self._unpriced:
            self._unpriced.add(model)
            log.warning("budget: %s has no price (llm.prices), so what strangers spend on it is not counted against "
                        "whatsapp.public_daily_usd; add a price to hold them to it", model or "a model")

    def closed(self, kind: LimitKind, key: str, usd: float) -> bool:
        """Whether the limit (``kind``, ``key``) at ``usd`` refused a call today."""
        return self._day().closed.get((kind, key)) == usd

    def _close(self, day: _Day, limit: Limit, spent: float, reserved: float, usd: float) -> None:
        self.refused += 1
        if day.closed.get(limit.ident) == limit.usd:
            return
        day.closed[limit.ident] = limit.usd
        log.warning("budget: a model call for %s was not made: today's spend $%.4f plus $%.4f reserved by calls in "
                    "flight plus this call's worst case $%.4f would pass the %s limit $%.2f; no more calls under it "
                    "until midnight UTC (logged once a day)", limit.key, spent, reserved, usd,
                    _LIMIT_NAMES[limit.kind], limit.usd)

    def _unreserve(self, idents: tuple[tuple[LimitKind, str], ...], usd: float) -> None:
        for ident in idents:
            self._reserved[ident] = max(0.0, self._reserved.get(ident, 0.0) - usd)
        self._released.set()

    def observe(self, record: LLMCallRecord) -> None:
        """Count a recorded call's cost under each loaded limit it falls under (a ledger observer)."""
        cost = record.cost_usd or 0.0
        if cost <= 0:
            return
        spent = self._day().spent
        idents: tuple[tuple[LimitKind, str], ...] = (("daily", "*"), ("sender", record.sender or ""),
                                                     ("public", record.scope or ""))
        for ident in idents:
            if ident in spent:
                spent[ident] += cost


_LIMIT_NAMES: dict[LimitKind, str] = {"public": "public daily cap", "sender": "budget.per_sender_daily_usd",
                                      "daily": "budget.daily_usd"}


def worst_case(request: LLMRequest, chain: tuple[str, ...] | list[str], prices: PriceTable) -> tuple[float | None, str]:
    """The most ``request`` can cost on any model of ``chain`` (the prompt's estimated tokens, with
    :data:`PROMPT_MARGIN`, at the dearest input price (a cache write may cost more than fresh input),
    and ``max_tokens`` at the output price; each picture at the most its model bills one as,
    :func:`board.llm.vision.image_tokens`), and the first model of the chain with no price
    ((None, model) then: it cannot be counted)."""
    text = [request.system_text, *(m.content for m in request.messages), *(m.context for m in request.messages),
            *(f"{t.name} {t.description} {t.parameters}" for t in request.tools)]
    prompt = sum(estimate_tokens(part) for part in text) + MESSAGE_OVERHEAD * len(request.messages)
    tokens_in, tokens_out = int(prompt * PROMPT_MARGIN) + 1, request.max_tokens
    pictures = image_count(request)
    worst = 0.0
    for model in chain:
        price = prices.price_of(model)
        if price is None:
            return None, model
        per_token_in = max(price.input, price.cache_read, price.cache_write)  # a cache write may cost more
        seen = pictures * image_tokens(model)  # each picture is billed as input tokens
        worst = max(worst, ((tokens_in + seen) * per_token_in + tokens_out * price.output) / 1_000_000)
    return worst, ""
