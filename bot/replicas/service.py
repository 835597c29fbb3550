"""This process as one replica: its registry row with a heartbeat, and (Telegram polling mode) its part in
electing the one poller. The daemon starts it after the board opens and stops it last.

On PostgreSQL the poller is elected (:class:`~bot.replicas.leader.AdvisoryLockLeader`); on SQLite the one
process always polls (:class:`~bot.replicas.leader.AlwaysLeader`).
"""

from __future__ import annotations

import logging

from board.clock import Clock
from board.storage import Database, Dialect
from bot.replicas.leader import AdvisoryLockLeader, AlwaysLeader, Leadership
from bot.replicas.registry import Heartbeat, ReplicaIdentity, identity

__all__ = ["ReplicaService"]

log = logging.getLogger("sabha.replicas")


class ReplicaService:
    """Registry row + heartbeat + polling leadership for one ``sabha run``."""

    def __init__(self, db: Database, clock: Clock, *, name: str = "", lease_s: float = 15.0,
                 elect_poller: bool = False) -> None:
        self.db = db
        self.me: ReplicaIdentity = identity(name, clock)
        self.heartbeat = Heartbeat(db, self.me, clock, lease_s=lease_s)
        self.leader: AdvisoryLockLeader | AlwaysLeader | None = None
        if elect_poller:
            url = getattr(db, "url", None)
            if db.dialect is Dialect.POSTGRES and url is not None:
                # frozen alive, it lets go of polling after lease_s, as it lets go of its conversations
                self.leader = AdvisoryLockLeader(url, self.me.name, idle_s=lease_s,
                                                 changed=self.heartbeat.set_polling)
            else:
                self.leader = AlwaysLeader()

    @property
    def leadership(self) -> Leadership | None:
        """What the Telegram channel polls under (None: not in polling mode)."""
        return self.leader

    async def start(self) -> None:
        """Register (raises :class:`~bot.replicas.registry.ReplicaNameTaken`), beat, and stand for poller."""
        await self.heartbeat.start()
        if self.leader is not None:
            if isinstance(self.leader, AlwaysLeader):
                self.heartbeat.set_polling(True)
            await self.leader.start()

    async def stop(self) -> None:
        """Give up polling, stop beating, remove the row."""
        if self.leader is not None:
            await self.leader.stop()
        await self.heartbeat.stop()
