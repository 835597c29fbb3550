"""The daemon's Prometheus metrics (``GET /metrics``), on a registry of its own.

:class:`Metrics` owns a :class:`prometheus_client.CollectorRegistry` per daemon (never the
process-global one, so two daemons in one test process do not mix) and counts where the
events happen without reaching into anyone's internals:

- model calls, tokens and cost: an observer of the ledger (every provider call, each retry and
  fallback included);
- turns and the turn latency histogram: an observer of the runner (the fields of the turn log line);
- soul reloads and load errors: an observer of the soul store;

The three observers are handed to the board when it is built (:meth:`Metrics.observers`,
:class:`board.app.Observers`), never appended to its parts afterwards.
- messages in / out per channel, delivery failures, storage failures, the intake's commits and the arrivals
  waiting for theirs (not acknowledged yet): read at scrape time from the counters the intake keeps anyway
  (:class:`IntakeCollector`);
- pending inbox per channel and meetings running: read at scrape time.

``errors`` is one family labelled by ``kind``: ``model_<outcome>`` (a failed provider
call: ``model_timeout``, ``model_auth`` ...), ``turn_degraded`` (every model failed, the
graceful reply went out), ``delivery_failed``, ``delivery_uncertain``, ``storage``.
"""

from __future__ import annotations

import logging
from collections import Counter as Tally
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from board.spending.ledger import LLMCallRecord

if TYPE_CHECKING:
    from board.app import Observers
    from board.room.convene import BoardRoom
    from bot.intake.intake import IntakeHub

__all__ = ["CONTENT_TYPE", "IntakeCollector", "Metrics"]

log = logging.getLogger("sabha.metrics")

#: What ``GET /metrics`` answers with (the text exposition format, version 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TURN_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)


class IntakeCollector(Collector):
    """Per-channel message counts and the ``errors`` family, read from the intake at scrape time."""

    def __init__(self, hub: IntakeHub, errors: Tally[str]) -> None:
        self.hub = hub
        self.errors = errors

    def collect(self) -> Iterator[Metric]:
        received = CounterMetricFamily("sabha_messages_received", "New messages stored by the intake, per channel",
                                       labels=["channel"])
        sent = CounterMetricFamily("sabha_messages_sent", "Replies delivered, per channel", labels=["channel"])
        denied = CounterMetricFamily("sabha_messages_denied", "Messages refused by the access gate, per channel",
                                     labels=["channel"])
        duplicates = CounterMetricFamily("sabha_messages_duplicate", "Redelivered messages skipped, per channel",
                                         labels=["channel"])
        commits = CounterMetricFamily("sabha_intake_commits", "Transactions that stored arrivals, per channel (a "
                                      "burst is stored in a few: group commit)", labels=["channel"])
        waiting = GaugeMetricFamily("sabha_intake_waiting", "Arrivals waiting for their commit now (not "
                                    "acknowledged to their service yet), per channel", labels=["channel"])
        errors = Tally(self.errors)
        for intake in self.hub.intakes:
            name = intake.courier.name
            received.add_metric([name], getattr(intake, "received", 0))
            sent.add_metric([name], intake.answered)
            denied.add_metric([name], intake.denied)
            duplicates.add_metric([name], intake.inbox.duplicates)
            commits.add_metric([name], getattr(intake, "commits", 0))
            waiting.add_metric([name], getattr(intake, "waiting", 0))
            errors["delivery_failed"] += intake.failed
            errors["delivery_uncertain"] += intake.uncertain
        errors["storage"] += getattr(self.hub.storage, "total_failures", self.hub.storage.failures)
        family = CounterMetricFamily("sabha_errors", "Errors by kind (see bot.ops.metrics)", labels=["kind"])
        for kind, count in sorted(errors.items()):
            family.add_metric([kind], count)
        yield from (received, sent, denied, duplicates, commits, waiting, family)


class Metrics:
    """One daemon's metrics; the board is built with :meth:`observers`, :meth:`render` scrapes."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.turns = Counter("sabha_turns", "Agent turns answered", ["channel", "role", "outcome"], registry=r)
        self.turn_latency = Histogram("sabha_turn_latency_seconds", "Time of one agent turn (prompt, model, tools)",
                                      ["channel"], buckets=TURN_BUCKETS, registry=r)
        self.model_calls = Counter("sabha_model_calls", "Provider calls (retries and fallbacks included)",
                                   ["provider", "model", "outcome"], registry=r)
        self.tokens = Counter("sabha_tokens", "Tokens of provider calls", ["model", "kind"], registry=r)
        self.cost = Counter("sabha_cost_usd", "Estimated cost of provider calls in USD", ["model"], registry=r)
        self.soul_reloads = Counter("sabha_soul_reloads", "Soul files reloaded after an edit", ["role"], registry=r)
        self.soul_load_errors = Counter("sabha_soul_load_errors", "Soul files that failed to load (the last good "
                                        "version stays live)", ["role"], registry=r)
        self.pending = Gauge("sabha_inbox_pending", "Messages stored and not answered yet", ["channel"], registry=r)
        self.meetings = Gauge("sabha_meetings_running", "Board meetings running now", registry=r)
        self.errors: Tally[str] = Tally()
        self._attached = False
        self._hub: IntakeHub | None = None
        self._collector: IntakeCollector | None = None

    # -- observers -------------------------------------------------------------------

    def on_model_call(self, rec: LLMCallRecord) -> None:
        """A provider call happened (ledger observer)."""
        self.model_calls.labels(rec.provider, rec.model, rec.outcome).inc()
        usage = rec.usage
        for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens),
                            ("cache_read", usage.cache_read_tokens), ("cache_write", usage.cache_write_tokens)):
            if count:
                self.tokens.labels(rec.model, kind).inc(count)
        if rec.cost_usd:
            self.cost.labels(rec.model).inc(rec.cost_usd)
        if rec.outcome != "ok":
            self.errors[f"model_{rec.outcome}"] += 1

    def on_turn(self, fields: Mapping[str, Any]) -> None:
        """A turn ended (runner observer; ``fields`` are its log line's)."""
        channel = str(fields.get("channel") or "unknown")
        degraded = bool(fields.get("degraded"))
        self.turns.labels(channel, str(fields.get("role") or "unknown"), "degraded" if degraded else "ok").inc()
        latency = fields.get("latency_ms")
        if isinstance(latency, (int, float)):
            self.turn_latency.labels(channel).observe(latency / 1000)
        if degraded:
            self.errors["turn_degraded"] += 1

    def on_soul(self, event: str, role: str) -> None:
        """A soul file was reloaded or failed to load (soul store observer)."""
        if event == "reloaded":
            self.soul_reloads.labels(role).inc()
        elif event == "load_error":
            self.soul_load_errors.labels(role).inc()

    # -- wiring ----------------------------------------------------------------------

    def observers(self) -> Observers:
        """What the board is built with (:func:`bot.app.open_board`): told from :meth:`attach` until :meth:`detach`."""
        from board.app import Observers

        return Observers(model_calls=(self._told(self.on_model_call),), turns=(self._told(self.on_turn),),
                         souls=(self._told(self.on_soul),))

    def _told(self, observer: Callable[..., None]) -> Callable[..., None]:
        def observe(*args: Any) -> None:
            if self._attached:  # this daemon's board
                observer(*args)
        return observe

    def attach(self, room: BoardRoom, hub: IntakeHub) -> None:
        """Count what the board (built with :meth:`observers`) tells, and read its meeting ``room`` and ``hub``
        at scrape time (undo with :meth:`detach`)."""
        self._attached, self._hub = True, hub
        self.meetings.set_function(lambda: float(len(room.running())))
        self._collector = IntakeCollector(hub, self.errors)
        self.registry.register(self._collector)

    def detach(self) -> None:
        """Stop counting what the board tells (it may outlive the daemon, e.g. in tests)."""
        self._attached = False

    async def pending_inbox(self) -> dict[str, int]:
        """Messages stored and not answered, per channel (from the state db)."""
        counts: dict[str, int] = {}
        for intake in self._hub.intakes if self._hub is not None else []:
            try:
                counts[intake.courier.name] = counts.get(intake.courier.name, 0) + await intake.inbox.count_unfinished()
            except Exception as exc:  # noqa: BLE001 - a scrape must answer even when the db does not
                log.debug("counting the pending inbox of %s failed: %s", intake.courier.name, exc)
        return counts

    async def render(self) -> bytes:
        """The text exposition of every metric, pending inbox refreshed first."""
        for channel, count in (await self.pending_inbox()).items():
            self.pending.labels(channel).set(count)
        return generate_latest(self.registry)
