"""One replica at a time per conversation: the intake's use of :class:`board.storage.Leases`.

Several ``sabha run`` replicas may share one PostgreSQL state store (``state.url``); any of them may take in
any message. A conversation (the intake's lane) is worked by the replica holding its lease, ``lane:<lane>``:

* a replica takes the lease before it answers a message of the lane, and keeps it while the lane has work
  (renewed every ``replicas.lease_s / 3`` by the heartbeat); it lets it go at the heartbeat after the lane
  went idle (:meth:`LaneLeases.idle`), so the next message may be answered by whichever replica took it in;
* a message stored by a replica whose lane another replica holds is left to the holder: each replica's
  dispatcher (:meth:`bot.intake.intake.Intake.dispatch`) polls for unanswered messages in lanes it holds or
  can take and feeds them to its own scheduler, in the order they were stored, never twice;
* a replica killed stops renewing; its leases expire after ``lease_s`` and another replica's dispatcher takes
  them and resumes what was left under the restart rules (a stored reply is delivered, one that may have
  arrived is never sent again).

* a conversation whose next message waits in this replica's queue behind busy turns (none of its own running:
  :meth:`bot.intake.lanes.Lanes.parked`) is handed over to a replica with room (:meth:`LaneLeases.balance`, at
  the dispatcher's look): each replica publishes its spare turns in ``intake_room`` (at once when a turn ends on a
  replica that had none); this one lets go of as many parked conversations' leases (those that would start here
  last) as the other live replicas have spare turns, and at least their fair share of the backlog
  (:meth:`LaneLeases.to_let_go`), and their dispatchers, which take a conversation only with a turn free, take
  them up, the rest as their turns end. Each published figure is used for one hand-over (the next waits for a
  newer one), so a stale figure does not let the whole backlog go to one spare turn. Never a conversation
  with a turn in flight here (its next message waits for it anyway, and taking its lease away would stop it);
  without room elsewhere nothing is handed over. The job left queued here finds the conversation taken (or
  answered) when its turn comes, or takes it back if nobody did: a hand-over costs no message and no turn twice.

* renewal runs on a connection of its own (:class:`board.storage.Leases`), on a fixed beat; when it finds a
  conversation's lease taken by another replica (this one was cut off longer than ``lease_s``), the turn this
  replica runs on it (:meth:`LaneLeases.turn`: the board's work, never a delivery) is cancelled at once and ends
  in :class:`~bot.intake.inbox.LeaseLost`, as when the fence refuses a late answer: the holder answers it, and
  the model is not kept busy with an answer nobody will send.

On SQLite one process owns the data dir: at start it takes over every lease (its predecessor's are dead).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from types import TracebackType
from typing import TYPE_CHECKING

from board.storage import Database, Dialect, Leases
from board.tools.consent import consent_lane
from bot.intake.inbox import LeaseLost

if TYPE_CHECKING:
    from board.clock import Clock
    from bot.intake.lanes import Lanes

__all__ = ["LaneLeases", "LeasedTurn", "lane_key", "replica_name"]

_PUBLISH_ROOM = ("INSERT INTO intake_room (holder, spare, seen_at) VALUES (?, ?, ?) ON CONFLICT (holder) DO UPDATE "
                 "SET spare = excluded.spare, seen_at = excluded.seen_at")
_ROOM_ELSEWHERE = "SELECT holder, spare, seen_at FROM intake_room WHERE holder <> ? AND seen_at >= ? AND spare > 0"

log = logging.getLogger("sabha.intake")

#: How often a replica's dispatcher looks for messages it should answer (PostgreSQL: other replicas store
#: them; SQLite: only a job that failed leaves one, so rarely).
POLL_S = {Dialect.POSTGRES: 0.4, Dialect.SQLITE: 5.0}


def lane_key(lane: str) -> str:
    """The lease key of a conversation."""
    return f"lane:{lane}"


def replica_name(configured: str = "") -> str:
    """``replicas.name``, or ``<hostname>-<pid>`` when it is empty."""
    return configured.strip() or f"{socket.gethostname()}-{os.getpid()}"


class LeasedTurn:
    """``async with lanes.turn(lane):`` the board's work on a conversation this replica holds. When the heartbeat
    finds the lease lost, the task running the block is cancelled and the block ends in :class:`LeaseLost` (a
    cancellation from elsewhere, a stop, passes through unchanged; the way :func:`asyncio.timeout` tells its own
    cancellation from another)."""

    def __init__(self, lanes: LaneLeases, lane: str) -> None:
        self.lanes = lanes
        self.lane = lane
        self.lost = False
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0

    async def __aenter__(self) -> LeasedTurn:
        self._task = asyncio.current_task()
        assert self._task is not None
        self._cancelling = self._task.cancelling()
        self.lanes._turns.setdefault(self.lane, set()).add(self)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        turns = self.lanes._turns.get(self.lane)
        if turns is not None:
            turns.discard(self)
            if not turns:
                del self.lanes._turns[self.lane]
        if not self.lost:
            return
        assert self._task is not None
        if self._task.uncancel() <= self._cancelling and kind in (None, asyncio.CancelledError):
            raise LeaseLost(f"{self.lanes.holder} lost conversation {self.lane} to another replica while its turn "
                            "ran; the turn is stopped (the conversation's holder answers it)") from exc

    def lose(self) -> None:
        """The lease is gone: cancel the block (once)."""
        if not self.lost and self._task is not None:
            self.lost = True
            self._task.cancel()


class LaneLeases:
    """The leases of one replica's conversations (shared by the intakes of all its channels)."""

    def __init__(self, db: Database, scheduler: Lanes, *, holder: str, lease_s: float, clock: Clock) -> None:
        self.leases = Leases(db, holder, lease_s, clock)
        self.db = db
        self.scheduler = scheduler
        self.poll_s = POLL_S[db.dialect]
        #: Other processes store messages into this replica's conversations (PostgreSQL); on SQLite one
        #: process owns the data dir, so a conversation's messages reach its lane in the order they were stored.
        self.shared = db.dialect is not Dialect.SQLITE
        self._started = False
        self._starting = asyncio.Lock()
        self._heartbeat: asyncio.Task[None] | None = None
        self._releasing: asyncio.Task[None] | None = None  # idle leases being let go (off the heartbeat's path)
        self._idle: set[str] = set()  # lanes whose lease goes at the next heartbeat
        self._turns: dict[str, set[LeasedTurn]] = {}  # the board's work running here, by lane
        self._balancing = False  # one balance() at a time (every channel's dispatcher calls it)
        self._balanced_at = float("-inf")  # monotonic time of the last balance()
        self._published: tuple[int, float] | None = None  # the spare turns last published, and when (board clock)
        #: The room figures (holder -> seen_at) the last hand-over used: each is used once, the next hand-over
        #: waits for a newer one (the replica with room took some up, or said again that it has room).
        self._room_used: dict[str, float] = {}
        self.handed_over = 0  # conversations let go to a replica with room
        self.balances = 0  # balance() runs done (published room, handed over what could go)
        scheduler.on_idle = self.idle

    @property
    def holder(self) -> str:
        """This replica's name in the ``leases`` table."""
        return self.leases.holder

    async def start(self) -> None:
        """Once: on SQLite take over every lease (one process owns the data dir); start the heartbeat."""
        if self._started:
            return
        async with self._starting:  # a second caller waits until the take-over is done
            if not self._started:
                await self._start()

    async def _start(self) -> None:
        if self.db.dialect is Dialect.SQLITE:
            dropped = await self.leases.take_over_all()
            if dropped:
                log.info("leases: took over %d conversation lease(s) left by the previous run", dropped)
        else:
            log.info("replica %s: conversations are leased for %.0f s (replicas.lease_s), renewed every %.1f s",
                     self.holder, self.leases.lease_s, self.leases.heartbeat_s)
        self._heartbeat = asyncio.create_task(self._beat(), name="lease heartbeat")
        self._started = True

    async def _beat(self) -> None:
        """Renew, then let idle conversations go in the background: a release that waits (for a pooled connection,
        under load) must not hold back the next renewal (conversations with turns in flight expired so)."""
        beat = self.leases.heartbeat_s
        due = time.monotonic() + beat
        while True:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            due += beat  # a fixed beat: a slow renewal does not push the next one later
            try:
                await self.leases.renew()  # on a connection of its own, within a beat
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - an outage: the next beat tries again
                log.warning("leases: could not renew the leases of %s (%s); trying again in %.1f s", self.holder,
                            exc, beat)
            else:
                self._stop_lost_turns()
            due = max(due, time.monotonic())
            if self._idle and (self._releasing is None or self._releasing.done()):
                self._releasing = asyncio.create_task(self._release_idle(), name="lease release")

    def _stop_lost_turns(self) -> None:
        """Cancel the turns running here on conversations whose lease this replica no longer holds."""
        for lane, turns in list(self._turns.items()):
            if self.holds(lane):
                continue
            for turn in list(turns):
                if not turn.lost:
                    log.warning("leases: %s lost conversation %s to another replica; stopping its turn here (the "
                                "holder answers it)", self.holder, lane)
                turn.lose()

    def turn(self, lane: str) -> LeasedTurn:
        """Wrap the board's work on ``lane`` (see :class:`LeasedTurn`); never a delivery."""
        return LeasedTurn(self, lane)

    async def _release_idle(self) -> None:
        idle, self._idle = self._idle, set()
        for lane in sorted(idle):
            if self.scheduler.active(lane) or not self.holds(lane):  # work came meanwhile: keep it
                continue
            try:
                await self.leases.release(lane_key(lane))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - an outage: the lease expires by itself
                log.warning("leases: could not let go of %s (%s); it expires in %.0f s", lane_key(lane), exc,
                            self.leases.lease_s)

    async def balance(self) -> int:
        """Publish this replica's spare turns and hand parked conversations over to replicas with room (see the
        module docstring); at most once per ``poll_s`` however many dispatchers call it. Returns how many
        conversations were let go."""
        if not self.shared or self._balancing:
            return 0
        if time.monotonic() - self._balanced_at < self.poll_s * 0.9:
            if self._room_opened():  # a turn ended on a full replica: say so now, not a poll later
                self._balancing = True
                try:
                    await self._publish_room()
                finally:
                    self._balancing = False
            return 0
        self._balancing = True
        try:
            await self._publish_room()
            let_go = await self._hand_over()
            self.balances += 1
            return let_go
        finally:
            self._balanced_at = time.monotonic()
            self._balancing = False

    async def _publish_room(self) -> None:
        """Write this replica's spare turns when they changed, or once a heartbeat so they stay fresh."""
        spare, now = self.scheduler.spare, self.leases.clock.now().timestamp()
        if self._published is not None and self._published[0] == spare \
                and now - self._published[1] < self.leases.heartbeat_s:
            return
        await self.db.execute(_PUBLISH_ROOM, (self.holder, spare, now))
        self._published = (spare, now)

    def _room_opened(self) -> bool:
        """True when this replica has spare turns and last told the others it had none."""
        return self._published is not None and self._published[0] == 0 and self.scheduler.spare > 0

    def _parked(self) -> list[str]:
        """Conversations this replica holds whose next message waits here with none of its turns running, the one
        that would start last first (consent answers stay: the turn waiting for one runs here)."""
        return [lane for lane in reversed(self.scheduler.parked())
                if self.holds(lane) and lane not in self._turns and consent_lane(lane) != lane]

    async def _hand_over(self) -> int:
        parked = self._parked()
        if not parked:
            return 0
        rows = await self.db.fetchall(_ROOM_ELSEWHERE, (self.holder, self.leases.clock.now().timestamp()
                                                       - self.leases.lease_s))
        # A figure a hand-over used already is stale: the replica with room may have taken that hand-over up
        # since (it says so at its next look); using it again would let go of more than it has room for.
        fresh = {str(r["holder"]): (int(r["spare"]), float(r["seen_at"])) for r in rows
                 if self._room_used.get(str(r["holder"])) != float(r["seen_at"])}
        room = sum(spare for spare, _ in fresh.values())
        let_go: list[str] = []
        for_room = self.to_let_go(len(parked), room, len(fresh))
        if for_room:  # replicas no longer seen are forgotten
            seen_now = {str(r["holder"]) for r in rows}
            self._room_used = {holder: seen for holder, seen in self._room_used.items() if holder in seen_now}
            self._room_used.update((holder, seen) for holder, (_, seen) in fresh.items())
        while len(let_go) < for_room:
            parked = self._parked()  # again after each statement: a turn may have started meanwhile
            if not parked:
                break
            lane = parked[0]
            let_go.append(lane)
            await self.leases.release(lane_key(lane))  # forgets it at once: a job starting now takes it back
        if let_go:
            self.handed_over += len(let_go)
            log.info("leases: %s handed %d conversation(s) waiting behind its busy turns over to replicas with "
                     "%d spare turn(s): %s", self.holder, len(let_go), room, ", ".join(let_go[:5]))
        return len(let_go)

    @staticmethod
    def to_let_go(parked: int, room: int, roomy: int) -> int:
        """How many of ``parked`` conversations to let go when the other replicas have ``room`` spare turns, ``roomy``
        of them some: as many as they can start now, and at least their fair share of the backlog (the replicas
        with room take ``roomy / (roomy + 1)`` of it, caps alike), so the backlog is not fed to them ``room`` at a
        time, one look of each side apart, while they sit idle between (what held two replicas at 1.8x one). What
        they do not take at once they take as their turns end; what is still free when its job comes up here is
        taken back by that job (a statement, not a message)."""
        if room <= 0 or parked <= 0:
            return 0
        return min(parked, max(room, parked * roomy // (roomy + 1)))

    def holds(self, lane: str) -> bool:
        """True when this replica holds ``lane``'s lease (as far as it knows; no statement)."""
        return self.leases.holds(lane_key(lane))

    async def take(self, lane: str) -> bool:
        """Take (or keep) ``lane``'s lease; False when another replica works it."""
        return await self.leases.take(lane_key(lane))

    def idle(self, lane: str) -> None:
        """The scheduler has nothing more for ``lane``: its lease goes at the next heartbeat unless work came
        meanwhile (a conversation going back and forth keeps it without a statement per message; a message of
        it taken in by another replica meanwhile is found by this replica's dispatcher and answered here)."""
        if self.holds(lane):
            self._idle.add(lane)

    async def stop(self) -> None:
        """Stop renewing and let every lease go, so the other replicas need not wait for them to expire."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        if self._releasing is not None:
            self._releasing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._releasing
            self._releasing = None
        if not self._started:
            return
        try:
            if self._published is not None:  # no room to offer any more
                await self.db.execute("DELETE FROM intake_room WHERE holder = ?", (self.holder,))
            await self.leases.release_all()
        except Exception as exc:  # noqa: BLE001 - stopping; they expire by themselves
            log.warning("leases: could not let go of %s's leases at stop (%s); they expire in %.0f s", self.holder,
                        exc, self.leases.lease_s)
        await self.leases.close()
