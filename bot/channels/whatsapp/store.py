"""WhatsApp's rows in the state db: each user's sticky role, and each outbound message's delivery record.

A sent message is recorded with Meta's id (``wamid``) as ``accepted``; the ``statuses``
webhooks then move it to ``sent`` / ``delivered`` / ``read`` or ``failed`` (with the error
code and title). A reply Meta refused because the 24-hour window had closed (131047),
at once or later in a ``failed`` status, is ``undeliverable``: :meth:`DeliveryStore.undeliverable`
lists those for ``sabha status`` and ``sabha whatsapp undeliverable``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from board.storage import Database

__all__ = ["DeliveryRecord", "DeliveryStatus", "DeliveryStore", "RoleStore"]


class DeliveryStatus(StrEnum):
    """Where an outbound message stands."""

    ACCEPTED = "accepted"  # Meta took it (a wamid); no status yet
    SENT = "sent"
    DELIVERED = "delivered"
    READ = "read"
    FAILED = "failed"
    UNDELIVERABLE = "undeliverable"  # the 24-hour window had closed (131047)


_RANK = {DeliveryStatus.ACCEPTED: 0, DeliveryStatus.SENT: 1, DeliveryStatus.DELIVERED: 2, DeliveryStatus.READ: 3,
         DeliveryStatus.FAILED: 4, DeliveryStatus.UNDELIVERABLE: 4}
#: A stored row's rank in SQL (:data:`_RANK`).
_RANK_SQL = ("CASE whatsapp_outbound.status " + " ".join(f"WHEN '{s.value}' THEN {r}" for s, r in _RANK.items())
             + " ELSE 0 END")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class DeliveryRecord:
    """One outbound message."""

    wamid: str | None
    user: str
    reply_to: str | None
    status: str
    error_code: int | None
    error_title: str | None
    updated_at: str


class DeliveryStore:
    """The ``whatsapp_outbound`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def accepted(self, wamid: str, user: str, reply_to: str | None) -> None:
        """Meta accepted a message (its id is ``wamid``)."""
        now = _now()
        await self.db.execute(
            "INSERT INTO whatsapp_outbound(wamid, user_key, reply_to, status, created_at, updated_at) "
            "VALUES (?, ?, ?, 'accepted', ?, ?) ON CONFLICT (wamid) WHERE wamid IS NOT NULL DO NOTHING",
            (wamid, user, reply_to, now, now))

    async def refused(self, user: str, reply_to: str | None, status: DeliveryStatus, code: int | None,
                      title: str | None) -> None:
        """Meta refused a send outright (no wamid)."""
        now = _now()
        await self.db.execute(
            "INSERT INTO whatsapp_outbound(wamid, user_key, reply_to, status, error_code, error_title, created_at, "
            "updated_at) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?)", (user, reply_to, status.value, code, title, now, now))

    async def status(self, wamid: str, status: DeliveryStatus, user: str | None, code: int | None = None,
                     title: str | None = None) -> None:
        """A ``statuses[]`` webhook for ``wamid`` (a status never moves back: read stays read).

        One statement, so replicas handling two webhooks of one message at the same moment neither
        break the wamid key nor move a status back (the rank is compared in the row's own update)."""
        now = _now()
        await self.db.execute(
            "INSERT INTO whatsapp_outbound(wamid, user_key, reply_to, status, error_code, error_title, "
            "created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?) "
            "ON CONFLICT (wamid) WHERE wamid IS NOT NULL DO UPDATE SET status = excluded.status, "
            "error_code = COALESCE(excluded.error_code, whatsapp_outbound.error_code), "
            "error_title = COALESCE(excluded.error_title, whatsapp_outbound.error_title), "
            f"updated_at = excluded.updated_at WHERE {_RANK_SQL} <= ?",
            (wamid, user or "?", status.value, code, title, now, now, _RANK[status]))

    async def get(self, wamid: str) -> DeliveryRecord | None:
        """One message's record."""
        row = await self.db.fetchone("SELECT * FROM whatsapp_outbound WHERE wamid = ?", (wamid,))
        return None if row is None else _record(row)

    async def undeliverable(self, limit: int = 20) -> list[DeliveryRecord]:
        """The latest replies that could not be delivered because the 24-hour window had closed."""
        rows = await self.db.fetchall(
            "SELECT * FROM whatsapp_outbound WHERE status = 'undeliverable' ORDER BY updated_at DESC LIMIT ?",
            (limit,))
        return [_record(r) for r in rows]

    async def counts(self) -> dict[str, int]:
        """How many outbound messages stand in each status."""
        rows = await self.db.fetchall("SELECT status, COUNT(*) AS n FROM whatsapp_outbound GROUP BY status")
        return {str(r["status"]): int(r["n"]) for r in rows}


def _record(row: object) -> DeliveryRecord:
    r = row  # an aiosqlite.Row
    return DeliveryRecord(r["wamid"], r["user_key"], r["reply_to"], r["status"], r["error_code"],  # type: ignore[index]
                          r["error_title"], r["updated_at"])  # type: ignore[index]


class RoleStore:
    """The ``whatsapp_users`` table: the role each user talks to until they switch."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.roles: dict[str, str] = {}

    async def load(self) -> None:
        """Read every user's role."""
        rows = await self.db.fetchall("SELECT user_key, role FROM whatsapp_users")
        self.roles = {str(r["user_key"]): str(r["role"]) for r in rows}

    def role_of(self, user: str) -> str | None:
        """The user's sticky role (None: the default)."""
        return self.roles.get(user)

    async def set(self, user: str, role: str) -> None:
        """``user`` talks to ``role`` from now on."""
        if self.roles.get(user) == role:
            return
        self.roles[user] = role
        await self.db.execute(
            "INSERT INTO whatsapp_users(user_key, role, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(user_key) DO UPDATE SET role = excluded.role, updated_at = excluded.updated_at",
            (user, role, _now()))
