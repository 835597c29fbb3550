"""When and how one person's facts are consolidated: :class:`Consolidator`.

**When.** Once the board has heard new facts from a person (:meth:`Consolidator.noticed`, called by the memory
writer after it kept one), their run is scheduled for the next ``memory.consolidation.hour`` (the board's
timezone): a ``scheduled_work`` row of kind ``consolidation`` keyed ``consolidation:<user>:<day>``, so however
many facts a day brings, one run. The row is claimed once (the schedule's rule); the run's change is applied in one
transaction keyed by that row (:meth:`board.memory.consolidation.changes.ChangeStore.apply`), so a run done again
after a kill applies nothing twice and calls no model again. Who: ``memory.consolidation.who`` (the owner and
members by default; strangers never). ``sabha memory consolidate`` runs one now (:meth:`Consolidator.run_now`).

**How.** The person's facts from their direct chats (at most ``max_facts``, the newest; a run with fewer than
``min_facts`` to tidy calls no model) go to the cheap model (``llm.cheap_model``, else the chair's) as quoted data,
recorded in the ledger with purpose ``consolidation``; its JSON plan is checked
(:func:`board.memory.consolidation.plan.checked`) and applied. The offline model cannot judge facts: with it no
model is called and nothing changes.

**Money.** A run is skipped (and tried again the next day) when consolidation's calls today reached
``memory.consolidation.daily_usd``, or the board's daily budget (``budget.daily_usd``) is spent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from board.agent.exchange import ExchangeRequest, ModelChoice, ToolPolicy
from board.agent.runner import AgentRunner
from board.agent.tools import ToolContext
from board.clock import Clock
from board.envelope import Envelope
from board.llm.base import PromptBlock
from board.memory.consolidation.changes import ChangeStore, MemoryChange, held_of
from board.memory.consolidation.plan import (
    CONSOLIDATION_PURPOSE,
    CONSOLIDATION_SYSTEM,
    PLAN_SCHEMA,
    Held,
    asked,
    checked,
    parse_plan,
)
from board.memory.consolidation.settings import ConsolidationSettings, ConsolidationWho
from board.memory.facts import EVERY_ROLE, FactStore
from board.schedule import NewWork, Place, Schedule, ScheduledWork, WorkKind
from board.spending.budget import Budget
from board.spending.ledger import start_of_day

__all__ = ["ConsolidationOutcome", "Consolidator", "work_key"]

log = logging.getLogger("sabha.memory")


def work_key(user: str, day: datetime) -> str:
    """The idempotency key of ``user``'s run due on ``day``."""
    return f"consolidation:{user}:{day:%Y-%m-%d}"


@dataclass(frozen=True)
class ConsolidationOutcome:
    """What one run did: the change it applied (None: none), or why it changed nothing."""

    change: MemoryChange | None
    note: str


class Consolidator:
    """Schedules and runs consolidations; see the module docstring."""

    def __init__(self, store: FactStore, runner: AgentRunner, schedule: Schedule, clock: Clock, *,
                 budget: Budget | None = None, zone: str = "UTC") -> None:
        self.facts = store
        self.changes = ChangeStore(store.db)
        self.runner = runner
        self.schedule = schedule
        self.clock = clock
        self.budget = budget
        self.zone = ZoneInfo(zone)
        schedule.register(WorkKind.CONSOLIDATION, self.handle)

    @property
    def settings(self) -> ConsolidationSettings:
        return self.facts.settings.consolidation

    def wanted(self, envelope: Envelope) -> bool:
        """Whether the sender of ``envelope`` has their facts consolidated (``who``; strangers never)."""
        s = self.settings
        if not s.enabled or envelope.is_public:
            return False
        return envelope.is_owner or s.who is ConsolidationWho.MEMBERS

    def _next_slot(self, after: datetime) -> datetime:
        local = after.astimezone(self.zone)
        slot = datetime.combine(local.date(), time(self.settings.hour), tzinfo=self.zone)
        return slot if slot > local else slot + timedelta(days=1)

    async def noticed(self, user: str, envelope: Envelope) -> None:
        """New facts were kept about ``user`` (heard in ``envelope``): their run at the next slot (one a day)."""
        if not self.wanted(envelope):
            return
        due = self._next_slot(self.clock.now())
        await self.schedule.add(NewWork(WorkKind.CONSOLIDATION, work_key(user, due), due,
                                        Place(envelope.channel, envelope.chat_id), {"user": user}))

    async def handle(self, work: ScheduledWork) -> None:
        """The handler of ``consolidation`` rows: one run for the row's person (nothing to send)."""
        user = str(work.payload.get("user") or "")
        if not user:
            log.warning("memory: consolidation %s names no person; nothing done", work.key)
            return None
        if not self.settings.enabled:
            log.info("memory: consolidation %s not run: memory.consolidation.enabled is false", work.key)
            return None
        stop = await self._over_budget()
        if stop is not None:
            later = self._next_slot(self.clock.now() + timedelta(hours=1))
            await self.schedule.add(NewWork(WorkKind.CONSOLIDATION, work_key(user, later), later, work.place,
                                            {"user": user}))
            log.warning("memory: consolidation of %s put off to %s: %s", user, later.isoformat(timespec="minutes"),
                        stop)
            return None
        outcome = await self.run(user, work.key)
        log.info("memory: consolidation of %s (%s): %s", user, work.key, outcome.note)
        return None

    async def run_now(self, user: str) -> ConsolidationOutcome:
        """One run for ``user`` now (``sabha memory consolidate``), under its own key; the same money rules."""
        stop = await self._over_budget()
        if stop is not None:
            return ConsolidationOutcome(None, f"not run: {stop}")
        return await self.run(user, f"consolidation:{user}:now:{self.clock.now().isoformat()}")

    async def _over_budget(self) -> str | None:
        """Why no consolidation may call a model now, or None."""
        s = self.settings
        row = await self.facts.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE purpose = ? AND ts >= ?",
            (CONSOLIDATION_PURPOSE, start_of_day(self.clock.now()).isoformat(timespec="seconds")))
        spent = float(row["usd"]) if row is not None else 0.0
        if spent >= s.daily_usd:
            return (f"consolidation spent ${spent:.4f} today, its cap is memory.consolidation.daily_usd "
                    f"${s.daily_usd:.2f}")
        if self.budget is not None:
            board = await self.budget.check(f"consolidation:{CONSOLIDATION_PURPOSE}", is_owner=True)
            if board is not None:
                return f"the board's daily budget is spent (${board.spent:.4f} of ${board.limit:.2f})"
        return None

    async def run(self, user: str, key: str) -> ConsolidationOutcome:
        """Consolidate ``user``'s facts as run ``key`` (see the module docstring)."""
        done = await self.changes.of_work(key)
        if done is not None:  # applied before a kill stopped the row being finished: nothing twice
            return ConsolidationOutcome(done, f"change {done.id} was applied already")
        s = self.settings
        held = await held_of(self.facts.db, user)
        if not self.facts.settings.cross_role:  # what one advisor was told stays its own: kept out of the profile
            held = [h for h in held if h.fact.role == EVERY_ROLE]  # every advisor reads (memory.cross_role: false)
        held = held[-s.max_facts:]
        loose = [h for h in held if not h.fact.fixed]
        if len(loose) < s.min_facts:
            return ConsolidationOutcome(None, f"nothing to tidy ({len(loose)} fact(s) it may change, fewer than "
                                 f"memory.consolidation.min_facts {s.min_facts}); no model called")
        model = self.runner.settings.cheap_model or self.runner.model_for(self.runner.souls.profile("general"))
        if model.split(":", 1)[0] == "offline":
            return ConsolidationOutcome(None, "the offline model cannot judge facts (set llm.cheap_model); "
                                              "no model called")
        profile = await self.changes.profile(user)
        answer = await self._ask(user, held, profile, model)
        if answer is None:
            return ConsolidationOutcome(None, "the model failed; nothing changed")
        plan = parse_plan(answer)
        if plan is None:
            log.warning("memory: the consolidation model's answer for %s is no plan; nothing changed", user)
            return ConsolidationOutcome(None, "the model's answer was no plan; nothing changed")
        good = checked(plan, held, self.facts, self.clock.now(), stale_days=s.stale_days,
                       profile_chars=s.profile_chars, profile=profile)
        for why in good.refused:
            log.info("memory: consolidation of %s left out %s", user, why)
        change = await self.changes.apply(user, key, good, held, model=model)
        if change is None:
            return ConsolidationOutcome(await self.changes.of_work(key), "applied already")
        return ConsolidationOutcome(change, f"change {change.id}: {len(change.steps)} step(s)"
                               f"{', profile rewritten' if change.profile_after != change.profile_before else ''}"
                               f"{f', {len(good.refused)} left out' if good.refused else ''}")

    async def _ask(self, user: str, held: list[Held], profile: str | None, model: str) -> str | None:
        runner = self.runner
        s = self.settings
        system = CONSOLIDATION_SYSTEM.replace("{stale_days}", str(s.stale_days)).replace(
            "{profile_chars}", str(s.profile_chars))
        session = f"memory:{user}"
        outcome = await runner.run(ExchangeRequest(
            profile=runner.souls.profile("general"),
            ctx=ToolContext(role="general", session_key=session, envelope=None, chain=("general",)),
            prompt=asked(held, profile, self.clock.now()), system=(PromptBlock("consolidation", system),),
            purpose=CONSOLIDATION_PURPOSE, tools=ToolPolicy(allowed=(), max_rounds=0), response_schema=PLAN_SCHEMA,
            model=ModelChoice(model=model, max_tokens=1500)))
        if outcome.degraded:
            log.warning("memory: consolidation of %s: the model failed (%s); nothing changed", user, outcome.error)
            return None
        return outcome.text
