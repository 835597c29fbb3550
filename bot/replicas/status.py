"""What ``sabha status`` shows about the replicas on this state: who is alive (name, host, pid, since, last
seen, polling), the conversation leases each holds (table ``leases``, the intake's), and the backlog
(inbound messages not answered yet). It reads the tables defensively: a state without ``leases`` (a Sabha
from before replicas, or SQLite where one process needs none) shows no leases rather than failing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from board.storage import Database
from bot.replicas.registry import ReplicaRow, alive_replicas

__all__ = ["BACKLOG_STATUSES", "LeaseRow", "ReplicasReport", "read_report", "report_lines"]

#: Inbound messages in these states are received but not answered yet (the backlog).
BACKLOG_STATUSES = ("received", "replied", "sending", "unconfirmed")
#: At most this many lease keys are listed per replica (the count is always whole).
LEASES_SHOWN = 5


@dataclass(frozen=True)
class LeaseRow:
    """One held lease: a conversation (``key``) being worked by ``holder`` until ``expires_at``."""

    key: str
    holder: str
    expires_at: float | None  # epoch seconds (None: unreadable)
    taken_at: str


@dataclass(frozen=True)
class ReplicasReport:
    """Everything the status lines say, also as JSON (``sabha status --json``)."""

    now: float
    lease_s: float
    replicas: list[ReplicaRow]
    leases: list[LeaseRow] = field(default_factory=list)
    leases_readable: bool = True
    backlog: dict[str, int] = field(default_factory=dict)  # status -> count

    def as_json(self) -> dict[str, Any]:
        return {"lease_s": self.lease_s, "replicas": [asdict(r) for r in self.replicas],
                "leases": [asdict(le) for le in self.leases] if self.leases_readable else None,
                "backlog": self.backlog}


def _epoch(value: Any) -> float | None:
    """A lease's ``expires_at`` as epoch seconds: a number, or ISO text (the intake decides which)."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


async def _leases(db: Database, now: float) -> list[LeaseRow] | None:
    """The leases not expired yet, or None when there is no readable ``leases`` table."""
    try:
        rows = await db.fetchall("SELECT * FROM leases")
    except Exception:  # noqa: BLE001 - no such table (yet): no leases to show
        return None
    out = []
    for r in rows:
        keys = set(r.keys())
        expires = _epoch(r["expires_at"]) if "expires_at" in keys else None
        if expires is not None and expires < now:
            continue
        out.append(LeaseRow(str(r["key"]) if "key" in keys else "?", str(r["holder"]) if "holder" in keys else "?",
                            expires, str(r["taken_at"]) if "taken_at" in keys and r["taken_at"] is not None else ""))
    return sorted(out, key=lambda le: (le.holder, le.key))


async def _backlog(db: Database) -> dict[str, int]:
    rows = await db.fetchall(
        f"SELECT status, COUNT(*) AS n FROM inbound_messages WHERE status IN "
        f"({', '.join('?' * len(BACKLOG_STATUSES))}) GROUP BY status", BACKLOG_STATUSES)
    return {str(r["status"]): int(r["n"]) for r in rows}


async def read_report(db: Database, *, now: float, lease_s: float) -> ReplicasReport:
    """The replicas alive at ``now`` (epoch s), their leases and the backlog."""
    try:
        replicas = await alive_replicas(db, now=now, lease_s=lease_s)
    except Exception:  # noqa: BLE001 - a state from before replicas: nobody registered
        replicas = []
    leases = await _leases(db, now)
    return ReplicasReport(now, lease_s, replicas, leases or [], leases is not None, await _backlog(db))


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def report_lines(report: ReplicasReport) -> list[str]:
    """The ``Replicas:`` block of ``sabha status``."""
    now = report.now
    if not report.replicas:
        lines = [f"Replicas: none alive (none seen within replicas.lease_s = {report.lease_s:g} s)"]
    else:
        poller = next((r.name for r in report.replicas if r.polling), None)
        lines = [f"Replicas: {len(report.replicas)} alive" + (f"; {poller} polls Telegram" if poller else "")]
    by_holder: dict[str, list[LeaseRow]] = {}
    for lease in report.leases:
        by_holder.setdefault(lease.holder, []).append(lease)
    for r in report.replicas:
        held = by_holder.pop(r.name, [])
        lines.append(f"  {r.name}: pid {r.pid} on {r.host}, since {r.started_at}, last seen {now - r.seen_at:.1f} s "
                     f"ago ({_when(r.seen_at)}){', polling Telegram' if r.polling else ''}; "
                     + _lease_text(held, now))
    for holder, held in sorted(by_holder.items()):  # leases of a replica not alive: they expire on their own
        lines.append(f"  {holder} (not alive): " + _lease_text(held, now))
    if not report.leases_readable:
        lines.append("  leases: this state has no leases table (conversations are not leased here)")
    pending = sum(report.backlog.values())
    detail = ", ".join(f"{s} {n}" for s, n in sorted(report.backlog.items()))
    lines.append(f"Backlog: {pending} inbound message(s) not answered yet" + (f" ({detail})" if detail else ""))
    return lines


def _lease_text(held: list[LeaseRow], now: float) -> str:
    if not held:
        return "no leases"
    shown = ", ".join(f"{le.key} ({le.expires_at - now:.0f} s left)" if le.expires_at is not None else le.key
                      for le in held[:LEASES_SHOWN])
    more = f" and {len(held) - LEASES_SHOWN} more" if len(held) > LEASES_SHOWN else ""
    return f"{len(held)} lease(s): {shown}{more}"
