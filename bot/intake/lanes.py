"""Lanes under a global cap: order within a conversation, fairness across conversations.

Each conversation (a lane) runs one job at a time, in the order the jobs were submitted.
At most ``cap`` jobs run at once over all lanes; when more lanes have work than the cap
allows, lanes take turns (round robin): a lane that just ran a job goes to the back of
the queue, so one busy conversation cannot starve a hundred quiet ones. :meth:`submit`
is synchronous, so jobs enter a lane exactly in the order they were stored.

:meth:`hold` puts acknowledging first: while a webhook is being received and stored, and
until receipts have been quiet for ``quiet`` seconds (the gaps between the requests of a
burst are shorter), no new job starts (running ones go on), so a burst of notifications is
acknowledged at the speed of storing them, not of answering them. Jobs created at once run
their first steps back to back, so thirty turns started in a gap of the burst would keep
the receipts behind them waiting for the event loop. A burst defers starts by at most
``max_defer`` seconds from its first receipt, after which jobs start as usual until the
receipts go quiet, even if they keep coming. A lone receipt is no burst: when the first
receipt of a burst is done and no other is being received, one job starts at once instead of
after ``quiet`` (a single message is not answered ``quiet`` later than it could be; a second
receipt within ``quiet`` makes it a burst again, deferring the rest). For the same reason jobs start one per turn
of the event loop, not all at once: between two starts the loop takes in what arrived. Work a receipt asks for in
the background (a first-time sender's name looked up) waits for the same moment (:meth:`receipts_quiet`).

A running job that only waits for a service's pace (Telegram lets one message be edited about once a second, so
a streamed answer's final edit waits for a second after its draft) steps aside (:func:`stepping_aside`): while it
waits, its place under the cap goes to the next conversation; its own lane stays taken (nothing of that
conversation starts meanwhile), and when the wait is over it takes the next free place before any new job does.
The cap bounds the turns working, not the answers waiting to be shown.

A job whose work is done (its answer stored) gives its place up for good (:func:`giving_place_up`): what is left of
it (delivering the stored answer, recording how that went) runs without a place under the cap, so the next
conversation's turn starts meanwhile; its lane stays taken until the job ends, so the conversation's next message
still waits for all of it. At most ``cap`` jobs go on without a place at once; a further one keeps its place.

:meth:`drain` stops starting jobs, waits for the running ones up to a grace period and
cancels what is left; jobs that never started are dropped from memory only (their
messages stay in the durable inbox and are taken up at the next start).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

__all__ = ["Job", "LaneLoad", "Lanes", "giving_place_up", "stepping_aside"]

log = logging.getLogger("sabha.intake")

Job = Callable[[], Awaitable[None]]

#: The lanes and the lane of the job running in this task (set by :meth:`Lanes._run`; unset outside a job).
_CURRENT: contextvars.ContextVar[tuple[Lanes, str] | None] = contextvars.ContextVar("sabha_lane", default=None)


@contextlib.asynccontextmanager
async def stepping_aside() -> AsyncIterator[None]:
    """Wrap a wait that is no work (a service's pace): the job running in this task gives its place under the cap
    to another conversation meanwhile, and takes one back after (see the module docstring). Outside a lane's job,
    nothing."""
    current = _CURRENT.get()
    if current is None:
        yield
        return
    lanes, lane = current
    async with lanes.aside(lane):
        yield


def giving_place_up() -> None:
    """The job running in this task gives its place under the cap up for the rest of its run and takes none back
    (:meth:`Lanes.let_go`); its lane stays taken until it ends. Outside a lane's job, nothing."""
    current = _CURRENT.get()
    if current is not None:
        lanes, lane = current
        lanes.let_go(lane)


@dataclass(frozen=True)
class LaneLoad:
    """The lanes at one moment (the operations page's "turns now"): jobs holding a place under ``cap`` (``working``),
    every job running (``running``: also those whose answer is on its way or that wait for a service's pace, no
    place held), jobs queued and the conversations they are in, the most that ever held a place at once, and how
    many ended."""

    running: int
    working: int
    cap: int
    waiting: int
    lanes: int
    peak: int
    done: int

    @property
    def outside(self) -> int:
        """Running jobs that hold no place under the cap (an answer on its way, a service's pace)."""
        return self.running - self.working


class Lanes:
    """Per-lane ordered jobs, at most ``cap`` running; see the module docstring."""

    def __init__(self, cap: int = 32, name: str = "intake", max_defer: float = 1.0, quiet: float = 0.1) -> None:
        if cap < 1:
            raise ValueError("the cap on turns in flight must be at least 1")
        self.cap = cap
        self.name = name
        self.max_defer = max_defer
        self.quiet = quiet
        self._holds = 0
        self._burst_since: float | None = None  # when the current burst of receipts began
        self._quiet_until = 0.0  # jobs wait until no receipt came for ``quiet`` seconds
        self._receipts = 0  # receipts in the current burst
        self._lone_start = False  # the one job a lone receipt may start without waiting ``quiet``
        self._timer: asyncio.TimerHandle | None = None
        self._kick_pending = False
        self._lanes: dict[str, deque[Job]] = {}
        self._ready: deque[str] = deque()  # lanes with work, none of it running, in turn order
        self._running: dict[str, asyncio.Task[None]] = {}
        self._aside: set[str] = set()  # running lanes whose job waits without its place under the cap
        self._gone: set[str] = set()  # of those, the ones that gave their place up for good (let_go)
        self._returning: deque[tuple[str, asyncio.Future[None]]] = deque()  # back from aside, waiting for a place
        self.closed = False
        #: Called with a lane when its last job ended and nothing more is queued in it (the intake lets the
        #: conversation's lease go then).
        self.on_idle: Callable[[str], None] | None = None
        self._on_spare: list[Callable[[], None]] = []
        self._quiet_waiters: set[asyncio.Future[None]] = set()  # receipts_quiet() callers, woken as receipts end
        self.done = 0
        self.peak = 0

    def submit(self, lane: str, job: Job, *, front: bool = False) -> bool:
        """Queue ``job`` at the end (or ``front``) of ``lane``; False once closed (the job is dropped)."""
        if self.closed:
            return False
        queue = self._lanes.get(lane)
        if queue is None:
            queue = self._lanes[lane] = deque()
        if front:
            queue.appendleft(job)
        else:
            queue.append(job)
        if lane not in self._running and lane not in self._ready:
            self._ready.append(lane)
        self._start_what_fits()
        return True

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """While inside (a webhook being received), and ``quiet`` seconds after the last one,
        start no new job; see the module docstring."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._burst_since is None or (self._holds == 0 and now >= self._quiet_until):
            self._burst_since = now  # a new burst of receipts
            self._receipts = 0
        self._receipts += 1
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if self._holds == 0:
                self._quiet_until = loop.time() + self.quiet
                self._lone_start = self._receipts == 1
                self._wake_quiet_waiters()  # they look again: quiet from now on, or another receipt came
                self._start_what_fits()

    async def receipts_quiet(self) -> None:
        """Return once receipts no longer defer new jobs (at once outside a burst): while a burst is being
        acknowledged, and ``quiet`` seconds after it, at most ``max_defer`` from its first receipt. For background
        work a receipt asks for, so acknowledging comes first for it as it does for the answers."""
        loop = asyncio.get_running_loop()
        while not self.closed and (until := self._deferring_until(loop.time())) is not None:
            waiter = loop.create_future()
            self._quiet_waiters.add(waiter)
            timer = loop.call_at(until, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._quiet_waiters.discard(waiter)

    def _deferring_until(self, now: float) -> float | None:
        """When receipts stop deferring new jobs at the earliest, as things stand at ``now``; None: they do not (no
        burst; or it went on longer than ``max_defer``, and jobs start as usual, receipts or not; or it is over).
        :meth:`_deferred` is this with its side effects (a lone start used up, the timer)."""
        if self._burst_since is None:
            return None
        cap = self._burst_since + self.max_defer
        if now >= cap or (self._holds == 0 and now >= self._quiet_until):
            return None
        return min(cap, self._quiet_until) if self._holds == 0 else cap

    def _wake_quiet_waiters(self) -> None:
        for waiter in self._quiet_waiters:
            _wake(waiter)

    def _deferred(self) -> bool:
        """True while receipts defer starting jobs (then a timer starts them at the latest)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        until = self._deferring_until(now)  # None: no burst, it went on too long (max_defer) or it is over
        if until is None:
            if self._holds == 0 and now >= self._quiet_until:
                self._burst_since = None  # the burst is over
            return False
        if self._lone_start and self._holds == 0 and self._receipts == 1:
            self._lone_start = False  # a lone receipt: its first job starts now, the rest wait as in a burst
            return False
        if self._timer is None or self._timer.cancelled() or self._timer.when() != until:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(until, self._start_what_fits)
        return True

    @property
    def _working(self) -> int:
        """Jobs holding a place under the cap: running and not stepped aside."""
        return len(self._running) - len(self._aside)

    @contextlib.asynccontextmanager
    async def aside(self, lane: str) -> AsyncIterator[None]:
        """While inside, ``lane``'s running job holds no place under the cap; on the way out it waits for one,
        before any job not yet started (:func:`stepping_aside` finds the lane of the calling task)."""
        if lane not in self._running or lane in self._aside:
            yield
            return
        self._aside.add(lane)
        self._start_what_fits()
        try:
            yield
        except BaseException:  # cancelled or failed while aside: the job ends, it waits for no place
            if lane not in self._gone:
                self._aside.discard(lane)
            raise
        if lane in self._gone:  # it gave its place up for good meanwhile: none is taken back
            return
        if self._working < self.cap and not self._returning:
            self._aside.discard(lane)
            return
        back = asyncio.get_running_loop().create_future()
        self._returning.append((lane, back))
        try:
            await back
        finally:
            if (lane, back) in self._returning:  # cancelled while waiting: no place taken
                self._returning.remove((lane, back))
            self._aside.discard(lane)

    def let_go(self, lane: str) -> None:
        """``lane``'s running job holds no place under the cap from now until it ends, and takes none back: the
        next job may start in its place, while ``lane`` itself stays taken (:func:`giving_place_up`). At most ``cap``
        jobs are without a place at once (a further one keeps its place): the channels size their connection pools
        for ``cap`` turns and as many deliveries (Telegram: ``2 * cap + 8``)."""
        if lane not in self._running or lane in self._gone:
            return
        if len(self._gone) >= self.cap:  # as many deliver without a place already: this one keeps its place
            return
        self._gone.add(lane)
        self._aside.add(lane)
        self._start_what_fits()
        if self.spare > 0:
            for callback in self._on_spare:
                callback()

    def _give_back(self) -> None:
        """Free places go first to jobs coming back from aside, oldest first."""
        while self._returning and self._working < self.cap:
            lane, back = self._returning.popleft()
            self._aside.discard(lane)
            if not back.done():
                back.set_result(None)

    def _start_what_fits(self) -> None:
        self._give_back()
        if self._ready and self._deferred():
            return
        while not self.closed and self._ready and self._working < self.cap:
            lane = self._ready[0]
            queue = self._lanes.get(lane)
            if not queue:
                self._ready.popleft()
                self._lanes.pop(lane, None)
                continue
            if self._kick_pending:  # a job already started in this turn of the event loop
                return  # the kick starts the next one in the next turn
            self._ready.popleft()
            job = queue.popleft()
            self._running[lane] = asyncio.create_task(self._run(lane, job), name=f"{self.name} {lane}")
            self.peak = max(self.peak, self._working)
            self._kick_pending = True
            asyncio.get_running_loop().call_soon(self._kicked)
            return

    def _kicked(self) -> None:
        self._kick_pending = False
        self._start_what_fits()

    async def _run(self, lane: str, job: Job) -> None:
        _CURRENT.set((self, lane))  # this task's own context: stepping_aside finds its lane
        try:
            await job()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: a job in lane %s failed", self.name, lane)
        finally:
            self.done += 1
            self._running.pop(lane, None)
            self._aside.discard(lane)
            self._gone.discard(lane)
            queue = self._lanes.get(lane)
            if queue:
                self._ready.append(lane)  # to the back: the other lanes go first
            else:
                self._lanes.pop(lane, None)
                if self.on_idle is not None:
                    self.on_idle(lane)
            self._start_what_fits()
            if self.spare > 0:
                for callback in self._on_spare:
                    callback()

    def when_spare(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever a job ends and leaves room under the cap (a replica's dispatcher looks
        for work then, instead of at its next poll)."""
        self._on_spare.append(callback)

    @property
    def spare(self) -> int:
        """Jobs that could start now without waiting: the cap less the jobs running and queued."""
        return max(0, self.cap - self._working - self.waiting)

    @property
    def running(self) -> int:
        """Jobs running now (those stepped aside too)."""
        return len(self._running)

    @property
    def stepped_aside(self) -> int:
        """Running jobs waiting for a service's pace, their place under the cap given to others."""
        return len(self._aside)

    @property
    def waiting(self) -> int:
        """Jobs queued, not started."""
        return sum(len(q) for q in self._lanes.values())

    @property
    def lanes(self) -> int:
        """Conversations with work running or queued."""
        return len(set(self._lanes) | set(self._running))

    def load(self) -> LaneLoad:
        """How loaded the lanes are now."""
        return LaneLoad(running=self.running, working=self._working, cap=self.cap, waiting=self.waiting,
                        lanes=self.lanes, peak=self.peak, done=self.done)

    def active(self, lane: str) -> bool:
        """True while ``lane`` has a job running or queued."""
        return lane in self._running or bool(self._lanes.get(lane))

    def parked(self) -> list[str]:
        """The lanes with work queued and none of it running (waiting for room under the cap), in the order they
        would start: the last one waits longest."""
        return [lane for lane in self._ready if self._lanes.get(lane) and lane not in self._running]

    def running_lanes(self) -> list[str]:
        """The lanes with a job running now."""
        return list(self._running)

    async def drain(self, timeout: float | None = None) -> bool:
        """Start nothing more; wait for running jobs up to ``timeout``, cancel the rest.
        True when every running job finished."""
        self.closed = True
        self._wake_quiet_waiters()
        dropped = self.waiting
        self._lanes.clear()
        self._ready.clear()
        tasks = list(self._running.values())
        if dropped:
            log.info("%s: %d queued message(s) not started; they stay in the inbox for the next start",
                     self.name, dropped)
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            log.warning("%s: %d answer(s) still running at the end of the shutdown grace were cancelled; their "
                        "messages stay in the inbox and are answered at the next start", self.name, len(pending))
            await asyncio.gather(*pending, return_exceptions=True)
        return not pending


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
