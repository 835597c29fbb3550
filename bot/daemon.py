"""``sabha run``: the daemon. One process, one event loop.

:class:`Daemon` opens the board, starts an aiohttp server (``server.host``/``server.port``:
``GET /healthz`` (alive), ``GET /readyz`` (ready to answer: :mod:`bot.ops.readiness`),
``GET /metrics`` (Prometheus: :mod:`bot.ops.metrics`) plus the channels' webhook routes and the
owner's web pages at ``/ui/``: :mod:`bot.web`),
the soul watcher (edits to soul files apply without a restart) and the configured
channels (Telegram when ``telegram.token`` is set), registers ``/status``, and runs until
SIGTERM or SIGINT (a second one exits at once: :mod:`bot.ops.signals`; stopped by SIGINT, Ctrl-C, it ends
with code 130 like every interrupted ``sabha`` command, by SIGTERM with 0). Slow clients are cut
off: a body must arrive within ``server.body_timeout_s`` and at most ``server.max_pending_bodies``
may be arriving at once (:mod:`bot.channels.webhook`); a connection with no complete request
for ``server.idle_timeout_s`` is closed. A channel webhook that arrives after the port opens and before
the channels are up is stored, answered 200 and handed to its channel once they are
(:mod:`bot.channels.held`).

Under systemd it speaks the notify protocol (:mod:`bot.ops.notify`): ``READY=1`` once the
channels are up, ``STATUS=`` lines (channels, pending inbox), ``WATCHDOG=1`` from the
event loop at half of ``$WATCHDOG_USEC``, ``STOPPING=1`` when shutdown begins. Once the
server listens it writes ``<data_dir>/daemon.json`` (:mod:`bot.ops.runtime`) for
``sabha status``, and removes it at a clean exit. A data dir that cannot be written ends
the start at once (:func:`bot.app.open_board` raises :class:`bot.intake.storage.DataDirUnwritable`:
one line, exit code 2). A PostgreSQL state store that cannot be reached yet is waited for with a capped
backoff (:mod:`bot.ops.startwait`: a stand-in server answers ``/healthz``, ``/readyz`` 503 meanwhile); one
that refuses the login or lacks the database ends the start (exit code 2).

Shutdown is ordered: channels stop taking messages, running meetings get a moment to
finish, received messages are answered, then channels, watcher, server and board close.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from board import __version__
from board.app import Board
from board.envelope import Envelope
from board.routing.router import Route
from bot.app import open_board
from bot.channels.base import Channel, ChannelCapabilities
from bot.channels.held.hold import WebhookHold, webhook_paths
from bot.channels.parts import ChannelParts
from bot.channels.registry import PLUGINS
from bot.channels.webhook import BODY_GATE, BodyGate
from bot.config import LoadedConfig
from bot.intake.answers import IntakeParts
from bot.intake.intake import IntakeHub
from bot.ops.interpreter import settle_after_start
from bot.ops.listen import bind_site
from bot.ops.logs import config_secrets, protect_config, redact
from bot.ops.metrics import CONTENT_TYPE, Metrics
from bot.ops.notify import Notifier, watchdog_interval, watchdog_pings
from bot.ops.readiness import Readiness, check_readiness, ping_store
from bot.ops.reload import ReloadSignal, reload_config
from bot.ops.runtime import RuntimeInfo, local_base, remove_runtime, write_runtime
from bot.ops.signals import StopSignals, exit_code_for
from bot.ops.startwait import StoreWait
from bot.ops.tracing import begin_tracing, end_tracing
from bot.ops.wake import wake_route
from bot.replicas.service import ReplicaService
from bot.scheduled import ScheduledWorkService

if TYPE_CHECKING:
    from bot.channels.held.desk import FrontDesk
    from bot.mcp_server.endpoint import McpEndpoint
    from bot.web.app import WebContext

log = logging.getLogger("sabha.daemon")

MEETING_GRACE_S = 10.0
STATUS_INTERVAL_S = 10.0  # how often systemd's STATUS= line is refreshed (when it changed)
LINGER_S = 2.0  # at most this long reading (and dropping) a body the answer did not need


def format_uptime(seconds: float) -> str:
    """``1d 2h 3m 4s`` style, leading zero units dropped."""
    seconds = int(seconds)
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size or parts:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    parts.append(f"{seconds}s")
    return " ".join(parts)


def channel_parts(board: Board) -> ChannelParts:
    """What the channels (and their intakes) use of ``board``: the one place they are taken from its parts."""
    parts = board.parts
    return ChannelParts(
        intake=IntakeParts(answers=board, db=parts.db, clock=parts.clock, schedule=parts.schedule),
        souls=parts.souls, commands=parts.commands, room=parts.room, decisions=parts.decisions, media=parts.media,
        sessions=parts.sessions, facts=parts.facts, people=parts.people, spend=parts.spend, money=parts.money,
        router=parts.router, max_message_chars=board.settings.max_message_chars)


def build_channels(loaded: LoadedConfig, board: Board, hub: IntakeHub) -> list[Channel]:
    """The channels this config enables, sharing ``hub`` (the global cap, storage health)."""
    uses = channel_parts(board)
    return [plugin.factory()(uses, loaded, hub) for plugin in PLUGINS if plugin.enabled(loaded)]


class Daemon:
    """The running Sabha; see the module docstring."""

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        board: Board | None = None,
        channels: list[Channel] | None = None,
        install_signals: bool = True,
        meeting_grace: float = MEETING_GRACE_S,
        notifier: Notifier | None = None,
    ) -> None:
        self.loaded = loaded
        self.board = board
        self.channels = channels
        self.install_signals = install_signals
        self.meeting_grace = meeting_grace
        self.stop_event = asyncio.Event()
        self.ready = asyncio.Event()
        self.started = time.monotonic()
        self.port: int | None = None
        self.hub = IntakeHub(loaded.config.inbox, slow_notice_s=loaded.config.board.slow_notice_s,
                             replica=loaded.config.replicas.name, lease_s=loaded.config.replicas.lease_s)
        self.notifier = notifier or Notifier()
        self.metrics = Metrics()
        self.phase = "starting"
        self.runtime_file: Path | None = None
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._runner: web.AppRunner | None = None
        self.front_desk: FrontDesk | None = None  # server.front_desk_port (bot.channels.held.desk)
        self.web: WebContext | None = None  # the owner's pages, when web.enabled
        self._last_status: str | None = None
        self.scheduled: ScheduledWorkService | None = None  # reminders, reviews ... (board.schedule)
        self._meetings_kept: tuple[asyncio.Task[None], asyncio.Event] | None = None  # board.room.meeting.takeover
        self.replica: ReplicaService | None = None  # this process among the replicas (bot.replicas)
        self.hold: WebhookHold | None = None  # webhooks arriving while the channels start (bot.channels.held)
        self._port_held: int | None = None  # the port the stand-in held while the state store was out of reach
        self._stop_signals: list[StopSignals] = []  # the first signal they received says the exit code

    # -- /status and /healthz ----------------------------------------------------------

    def status_text(self) -> str:
        """What ``/status`` answers."""
        assert self.board is not None
        board = self.board
        lines = [
            f"Sabha {__version__}, up {format_uptime(time.monotonic() - self.started)}",
            f"board: {board.settings.roster.name} roster, {len(board.parts.souls.roles())} roles, "
            f"model {board.settings.agent.default_model}",
        ]
        running = board.parts.room.running()
        if running:
            lines.append(f"meetings running: {', '.join(running)}")
        for channel in self.channels or []:
            lines.extend(channel.status_lines())
        if not self.channels:
            lines.append("channels: none (set telegram.token to connect Telegram)")
        return redact("\n".join(lines))

    async def _cmd_status(self, envelope: Envelope, route: Route) -> str:
        from board.commands.followup import overdue_lines
        from board.schedule.report import status_lines

        assert self.board is not None
        try:
            scheduled = [*await status_lines(self.board.parts.schedule.store, now=self.board.parts.clock.now()),
                         *await overdue_lines(self.board.parts.room.store, self.board.parts.reminders)]
        except Exception as exc:  # noqa: BLE001 - /status answers anyway
            scheduled = [f"Scheduled: unavailable ({exc})"]
        return redact("\n".join([self.status_text(), *scheduled, *await self._decision_lines()]))

    async def _decision_lines(self) -> list[str]:
        """``/status``: where the board's decisions stand (issue 27)."""
        from board.commands.decisions import status_lines

        assert self.board is not None
        try:
            return await status_lines(self.board.parts.decisions)
        except Exception as exc:  # noqa: BLE001 - /status answers anyway
            return [f"Decisions: unavailable ({exc})"]

    async def _healthz(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = {
            "status": "stopping" if self.stop_event.is_set() else "ok",
            "version": __version__,
            "uptime_s": round(time.monotonic() - self.started, 1),
            "channels": {c.name: c.describe() for c in self.channels or []},
            "storage": self.hub.storage.describe(),
            "turns": {"running": self.hub.scheduler.running, "waiting": self.hub.scheduler.waiting,
                      "cap": self.hub.scheduler.cap},
        }
        if self.front_desk is not None:  # server.front_desk_port
            body["front_desk"] = self.front_desk.describe()
        return web.json_response(body)

    async def readiness(self) -> Readiness:
        """Whether the daemon can answer right now, and why not (``/readyz``; the state store is pinged)."""
        parts = self.board.parts if self.board is not None else None
        unreachable = await ping_store(parts.db if parts is not None else None)
        return check_readiness(phase=self.phase, channels=self.channels or [], storage=self.hub.storage,
                               souls=parts.souls if parts is not None else None, workspace=self.loaded.workspace,
                               store_unreachable=unreachable, mcp=parts.mcp.states() if parts is not None else ())

    async def _readyz(self, request: web.Request) -> web.Response:
        verdict = await self.readiness()
        return web.json_response(verdict.as_json(), status=200 if verdict.ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=await self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def status_line(self) -> str:
        """One line for systemd's ``STATUS=``: readiness, channels, pending inbox, turns."""
        verdict = await self.readiness()
        channels = ", ".join(f"{c.name} {c.describe().get('state', '?')}" for c in self.channels or []) or "none"
        pending = sum((await self.metrics.pending_inbox()).values())
        head = "ready" if verdict.ready else f"not ready ({verdict.reasons[0]})"
        return redact(f"{head}; channels: {channels}; pending inbox {pending}; turns running "
                      f"{self.hub.scheduler.running}/{self.hub.scheduler.cap}")

    async def _send_status(self, force: bool = False) -> None:
        try:
            line = await self.status_line()
        except Exception as exc:  # noqa: BLE001 - a status line is never worth failing for
            line = f"status unavailable: {exc}"
        if force or line != self._last_status:
            self._last_status = line
            self.notifier.status(line)

    async def _status_updates(self, stop: asyncio.Event) -> None:
        """Refresh ``STATUS=`` every :data:`STATUS_INTERVAL_S` while running."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), STATUS_INTERVAL_S)
            if not stop.is_set():
                await self._send_status()

    def _write_runtime(self, phase: str = "running", port: int | None = None) -> None:
        """``daemon.json`` for ``sabha status``: ``starting`` on the stand-in's ``port`` while the state store is
        waited for (:mod:`bot.ops.startwait`), ``running`` once the server listens (it replaces the first)."""
        server = self.loaded.config.server
        info = RuntimeInfo(pid=os.getpid(), host=server.host, port=int(port or self.port or server.port),
                           started_at=self._started_at, version=__version__, phase=phase)
        try:
            self.runtime_file = write_runtime(self.loaded.data_dir, info)
        except OSError as exc:
            log.warning("cannot write %s (%s): `sabha status` will not find this daemon; check the data dir",
                        self.loaded.data_dir / "daemon.json", exc)

    def _remove_runtime(self) -> None:
        if self.runtime_file is not None:
            remove_runtime(self.loaded.data_dir, os.getpid())
            self.runtime_file = None

    def _wake_schedule(self) -> None:
        """Another process changed scheduled work (:mod:`bot.ops.wake`): the runner looks again now."""
        if self.board is not None:
            self.board.parts.schedule.wake()

    # -- lifecycle ---------------------------------------------------------------------

    def request_stop(self) -> None:
        """Ask the daemon to shut down (what SIGTERM / SIGINT do)."""
        if not self.stop_event.is_set():
            log.info("shutting down")
        self.stop_event.set()

    def request_reload(self) -> None:
        """Re-read the config file and apply what can change live (what SIGHUP does; see
        :mod:`bot.ops.reload`). A config that does not load is logged and the old one stays."""
        if self.board is None:
            log.warning("reload: the daemon is still starting; send SIGHUP again once it runs")
            return
        result = reload_config(self.loaded.source, self.loaded, board=self.board, runner=self.board.parts.runner,
                               budget=self.board.parts.budget, hub=self.hub, channels=self.channels or [],
                               mcp=self.board.parts.mcp)
        if result.loaded is not None:
            protect_config(result.loaded.config)  # a new secret is masked from the first line on
            self.loaded = result.loaded

    async def run(self) -> int:
        """Run until :meth:`request_stop` (or a signal); returns the exit code."""
        loop = asyncio.get_running_loop()
        owns_board = self.board is None
        stop_watch = asyncio.Event()
        ops_tasks: list[asyncio.Task[None]] = []
        interval = watchdog_interval()
        if interval is not None and self.notifier.enabled:  # from the first moment: a start may wait
            ops_tasks.append(asyncio.create_task(watchdog_pings(self.notifier, interval, stop_watch),
                                                 name="systemd watchdog"))
        try:
            opened = self.board is not None or await self._open_board(loop)
        except BaseException:
            await _end_tasks(ops_tasks, stop_watch)
            raise
        if not opened:  # stopped while waiting for the state store
            self.notifier.stopping("stopped while waiting for the state store")
            await _end_tasks(ops_tasks, stop_watch)
            return self.exit_code()
        assert self.board is not None
        board = self.board
        try:
            self.replica = await self._start_replica(board)  # a replica name in use: also before any port
        except BaseException:
            await _end_tasks(ops_tasks, stop_watch)
            if owns_board:
                await board.close()
            raise
        board.parts.mcp.start()  # the MCP servers connect in the background; /readyz shows each one's state
        settle_after_start()  # gc.freeze() and the switch interval (bot.ops.interpreter)
        signals = StopSignals(self.request_stop, before_exit=self._remove_runtime)
        self._stop_signals.append(signals)
        reload_signal = ReloadSignal(self.request_reload)  # SIGHUP
        watcher: asyncio.Task[None] | None = None
        started: list[Channel] = []
        self.metrics.attach(board.parts.room, self.hub)
        tracing = begin_tracing(self.loaded.config.telemetry, instance=self.replica.me.name if self.replica else "")
        try:
            if self.channels is None:
                self.channels = build_channels(self.loaded, board, self.hub)
            self._share_leadership()
            board.parts.commands.register_command("status", self._cmd_status, "/status: uptime, channels and topics",
                                   owner_only=True)  # numbers, message counters, topics: the owner's
            if self.install_signals:
                signals.install(loop)
                reload_signal.install(loop)
            await self._start_server()
            await self._start_front_desk()
            self._write_runtime()
            watcher = asyncio.create_task(board.watch(stop_watch), name="workspace watcher")  # souls, knowledge
            for channel in self.channels:
                await channel.start()
                started.append(channel)
            if self.hold is not None:  # what arrived meanwhile is handed over before the daemon says it is ready
                await self.hold.release(local_base(self.loaded.config.server.host, int(self.port or 0)))
            self.scheduled = ScheduledWorkService(board, self.channels, lease_s=self.loaded.config.replicas.lease_s,
                                                  recheck_s=self.loaded.config.state.schedule_recheck_s)
            self.scheduled.start()
            self._keep_meetings(board)  # meetings left running resume, now that their channels show them
            if not self.channels:
                log.warning("no channels configured: set telegram.token (see README, 'Telegram'); "
                            "serving only http://%s:%s/healthz", self.loaded.config.server.host, self.port)
            elif all(channel.name == "web" for channel in self.channels):
                log.warning("no messaging channel configured (set telegram.token, see README, 'Telegram'); "
                            "the board answers on the web chat only: `sabha web link` signs you in")
            log.info("sabha %s running: %d channel(s), http on %s:%s", __version__, len(started),
                     self.loaded.config.server.host, self.port)
            self.phase = "running"
            self.ready.set()
            # The model SDKs load now, off the event loop: not before the port (a second of CPU or more),
            # not in the first turn (a message that comes first waits for them, the loop does not).
            board.warm_up().add_done_callback(_report_models)
            self._last_status = await self.status_line()
            self.notifier.ready(self._last_status)
            if self.notifier.enabled:
                ops_tasks.append(asyncio.create_task(self._status_updates(stop_watch), name="systemd status"))
            await self.stop_event.wait()
        finally:
            self.phase = "stopping"
            self.notifier.stopping("stopping: finishing running answers, the rest stays stored for the next start")
            await self._shutdown(started, watcher, stop_watch)
            await end_tracing(tracing)  # the last answers' spans leave before the process does
            await _end_tasks(ops_tasks, stop_watch)
            signals.uninstall()
            reload_signal.uninstall()
            self.metrics.detach()
            await self._stop_replica()
            if owns_board:
                await board.close()
            self._remove_runtime()
        log.info("sabha stopped")
        return self.exit_code()

    def exit_code(self) -> int:
        """0 for a stop asked by SIGTERM (systemd) or in-process; 130 when Ctrl-C (SIGINT) stopped it, as
        every ``sabha`` command interrupted by Ctrl-C ends (:mod:`bot.cli.interrupt`)."""
        first = [sig for signals in self._stop_signals for sig in signals.received][:1]
        return exit_code_for(signal.SIGINT) if first == [signal.SIGINT] else 0

    async def _open_board(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Open the board, waiting out a state store that cannot be reached yet (:mod:`bot.ops.startwait`:
        a stand-in server answers /healthz and /readyz meanwhile); False when a stop came first.
        A data dir that cannot be written, a refused login, a bad URL raise at once (exit code 2)."""
        server, url = self.loaded.config.server, self.loaded.state_url()
        wait = StoreWait(host=server.host, port=server.port, where=f"PostgreSQL at {url.host}:{url.port}",
                         notifier=self.notifier, stop=self.stop_event,
                         on_waiting=lambda port: self._write_runtime("starting", port))
        signals = StopSignals(self.request_stop, before_exit=self._remove_runtime)
        self._stop_signals.append(signals)
        if self.install_signals:
            signals.install(loop)
        waited = None
        try:
            waited = await wait.open(lambda: open_board(self.loaded, wakes_daemon=False,
                                                     observers=self.metrics.observers()))  # DataDirUnwritable: first
        finally:
            signals.uninstall()
            if waited is None or waited.value is None:  # stopped or failed while waiting: no "starting" file left
                self._remove_runtime()
        self.board, self._port_held = waited.value, waited.port
        return waited.value is not None

    # -- replicas (bot.replicas) -----------------------------------------------------------

    async def _start_replica(self, board: Board) -> ReplicaService:
        """Register this process in ``replicas`` (heartbeat) and, in Telegram polling mode, stand for poller."""
        config = self.loaded.config
        polling = config.telegram.enabled and config.telegram.token is not None and config.telegram.mode == "polling"
        replica = ReplicaService(board.parts.db, board.parts.clock, name=config.replicas.name,
                                 lease_s=config.replicas.lease_s,
                                 elect_poller=polling)
        await replica.start()
        return replica

    def _share_leadership(self) -> None:
        """The Telegram channel polls only while this replica leads (:mod:`bot.replicas.leader`)."""
        if self.replica is None or self.replica.leadership is None:
            return
        for channel in self.channels or []:
            leader = ChannelCapabilities.of(channel).leader
            if leader is not None:
                leader.follow(self.replica.leadership)

    async def _stop_replica(self) -> None:
        if self.replica is not None:
            try:
                await self.replica.stop()
            except Exception:
                log.exception("leaving the replicas table failed")
            self.replica = None

    async def _start_server(self) -> None:
        server = self.loaded.config.server
        assert self.board is not None
        # webhooks that arrive before the channels are up: stored, 200, handed over after (bot.channels.held)
        senders = {webhook.webhook_path: webhook.webhook_senders for channel in self.channels or []
                   if (webhook := ChannelCapabilities.of(channel).webhook) is not None}
        self.hold = WebhookHold(self.board.parts.db, paths=webhook_paths(self.channels or []),
                                known_secrets=config_secrets(self.loaded.config), senders=senders)
        app = web.Application(middlewares=[self.hold.middleware])
        app[BODY_GATE] = BodyGate(server.body_timeout_s, server.max_pending_bodies)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        app.add_routes([wake_route(self._wake_schedule)])  # `sabha actions due` on SQLite (bot.ops.wake)
        for channel in self.channels or []:
            app.add_routes(channel.routes())
        web_pages = await self._mount_web(app)
        mcp = self._mount_mcp(app)
        # idle_timeout_s: aiohttp's keep-alive timer also runs from the moment a connection opens,
        # so a client that never completes its headers is closed after it too. A body left unread
        # (an early 401/413/408) is drained for at most lingering_time before the connection closes.
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None,
                                     keepalive_timeout=server.idle_timeout_s,
                                     lingering_time=min(LINGER_S, server.body_timeout_s))
        await self._runner.setup()
        port = server.port if self._port_held is None else self._port_held  # the stand-in's (port 0 in tests)
        self.port = await bind_site(self._runner, server.host, port, "port")
        if web_pages is not None:
            from bot.web.app import server_url

            web_pages.server_url = server_url(self.loaded, self.port)
            web_pages.intake_load = self.hub.scheduler.load
            log.info("web pages at %s/ui/ (sign in with a link from `sabha web link`)", web_pages.server_url)
        if mcp is not None:
            log.info("MCP endpoint at %s%s (streamable HTTP; every request needs 'Authorization: Bearer <token>', "
                     "the token of server.mcp.token)", local_base(server.host, int(self.port)), mcp.path)

    async def _start_front_desk(self) -> None:
        """The channels' webhooks on their own thread and port (``server.front_desk_port``;
        :mod:`bot.channels.held.desk`): stored, 200, then handed over through the hold."""
        server = self.loaded.config.server
        if server.front_desk_port is None or self.hold is None:
            return
        from bot.app import open_state_db
        from bot.channels.held.desk import DeskLimits, FrontDesk

        checks = {}
        for channel in self.channels or []:
            webhook = ChannelCapabilities.of(channel).webhook
            if webhook is not None and webhook.webhook_path in self.hold.paths:
                checks[webhook.webhook_path] = webhook.front_desk
        if not checks:
            log.warning("server.front_desk_port is set, but no channel receives webhooks (Slack events, WhatsApp, "
                        "Telegram in webhook mode): no front desk")
            return
        main_base = local_base(server.host, int(self.port or 0))
        loaded = self.loaded
        self.front_desk = FrontDesk(url=loaded.state_url(), opener=lambda: open_state_db(loaded), host=server.host,
                                    port=server.front_desk_port,
                                    checks=checks, hold=self.hold, main_base=main_base,
                                    limits=DeskLimits(server.body_timeout_s, server.max_pending_bodies,
                                                      server.idle_timeout_s))
        await self.front_desk.start()

    async def _mount_web(self, app: web.Application) -> WebContext | None:
        """The owner's pages at /ui/ (config ``web``; :mod:`bot.web`)."""
        if self.board is None or not self.loaded.config.web.enabled:
            return None
        from bot.web.app import mount_web

        self.web = await mount_web(app, self.board.parts, self.loaded)
        return self.web

    def _mount_mcp(self, app: web.Application) -> McpEndpoint | None:
        """The board as an MCP server at server.mcp.path, behind the owner's token (config ``server.mcp``;
        :mod:`bot.mcp_server`)."""
        section = self.loaded.config.server.mcp
        if self.board is None or not section.enabled:
            return None
        from bot.mcp_server.board_tools import McpBoardParts
        from bot.mcp_server.endpoint import mount_mcp

        return mount_mcp(app, McpBoardParts.of(self.board.parts), section)

    def _keep_meetings(self, board: Board) -> None:
        """Resume the meetings left running and, with replicas, keep them under leases
        (:mod:`board.room.meeting.takeover`) until the daemon stops."""
        from board.room.meeting.lease import MeetingLeases
        from board.storage import Dialect, Leases
        from bot.intake.leasing import replica_name

        parts, replicas = board.parts, self.loaded.config.replicas
        leases = MeetingLeases(Leases(parts.db, replica_name(replicas.name), replicas.lease_s, parts.clock)) \
            if parts.db.dialect is Dialect.POSTGRES else None
        stop = asyncio.Event()
        self._meetings_kept = (asyncio.create_task(parts.room.keep_running(leases, stop), name="meetings kept"), stop)

    async def _stop_keeping_meetings(self) -> None:
        """No meeting is resumed or taken over from here on (the ones running are suspended next)."""
        if self._meetings_kept is not None:
            task, stop = self._meetings_kept
            stop.set()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 10)
            self._meetings_kept = None

    async def _shutdown(self, started: list[Channel], watcher: asyncio.Task[None] | None,
                        stop_watch: asyncio.Event) -> None:
        if self.front_desk is not None:  # nothing is acknowledged from here on that is not handed over
            await self.front_desk.stop()
            self.front_desk = None
        for channel in started:
            with contextlib.suppress(Exception):
                await channel.stop_intake()
        assert self.board is not None
        if self.hold is not None:  # what it still holds is handed over at the next start
            await self.hold.stop()
        grace = self.hub.settings.shutdown_grace_s
        await self._stop_keeping_meetings()
        try:
            # Running answers and meetings finish within the grace; queued messages stay
            # stored and are answered at the next start, and so are the meetings still running
            # (suspended where they are: board.room.meeting.resume).
            await asyncio.gather(self.hub.drain(grace), self.board.parts.room.suspend(min(self.meeting_grace, grace)))
        except Exception:  # shutting down anyway
            log.exception("waiting for running answers and meetings failed")
        if self.scheduled is not None:  # before the channels it delivers through
            await self.scheduled.stop()
        for channel in started:
            try:
                await channel.stop()
            except Exception:
                log.exception("stopping channel %s failed", channel.name)
        stop_watch.set()
        if watcher is not None:
            try:
                await asyncio.wait_for(watcher, 2.0)
            except (TimeoutError, asyncio.CancelledError):
                watcher.cancel()
            except Exception:
                log.exception("soul watcher failed")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def _report_models(warming: asyncio.Future[list[str]]) -> None:
    """Once the model SDKs have loaded (:meth:`Board.warm_up`): say which configured models cannot be used,
    and move what the SDKs made out of the collector's sight, as what the start made was."""
    if warming.cancelled():
        return
    error = warming.exception()
    if error is not None:
        log.error("preparing the models failed: %s", error)
        return
    for problem in warming.result():
        log.error("%s; turns that use it answer degraded", problem)
    gc.freeze()


async def _end_tasks(tasks: list[asyncio.Task[None]], stop: asyncio.Event) -> None:
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def run_daemon(loaded: LoadedConfig) -> int:
    """Entry point of ``sabha run``."""
    return await Daemon(loaded).run()
