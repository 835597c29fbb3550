"""``sabha run``: the daemon. One process, one event loop.

:class:`Daemon` opens the board, starts an aiohttp server (``server.host``/``server.port``:
``GET /healthz`` plus the channels' webhook routes), the soul watcher (edits to soul
files apply without a restart) and the configured channels (Telegram when
``telegram.token`` is set), registers ``/status``, and runs until SIGTERM or SIGINT.
Shutdown is ordered: channels stop taking messages, running meetings get a moment to
finish, received messages are answered, then channels, watcher, server and board close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from typing import Any

from aiohttp import web

from board import __version__
from board.envelope import Envelope
from board.router import Route
from board.service import Board
from bot.app import open_board
from bot.channels.base import Channel
from bot.channels.registry import PLUGINS
from bot.config import LoadedConfig
from bot.intake.intake import IntakeHub, IntakeSettings
from bot.ops.reload import ReloadSignal, reload_config

log = logging.getLogger("sabha.daemon")

MEETING_GRACE_S = 10.0


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


def build_channels(loaded: LoadedConfig, board: Board, hub: IntakeHub) -> list[Channel]:
    """The channels this config enables, sharing ``hub`` (the global cap, storage health)."""
    return [plugin.factory()(board, loaded, hub) for plugin in PLUGINS if plugin.enabled(loaded)]


def intake_settings(loaded: LoadedConfig) -> IntakeSettings:
    """``inbox:`` as the intake's settings."""
    inbox = loaded.config.inbox
    return IntakeSettings(resume_max_age_s=inbox.resume_max_age_s, max_concurrent_turns=inbox.max_concurrent_turns,
                          shutdown_grace_s=inbox.shutdown_grace_s)


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
        self.hub = IntakeHub(intake_settings(loaded))
        self._runner: web.AppRunner | None = None

    # -- /status and /healthz ----------------------------------------------------------

    def status_text(self) -> str:
        """What ``/status`` answers."""
        assert self.board is not None
        board = self.board
        lines = [
            f"Sabha {__version__}, up {format_uptime(time.monotonic() - self.started)}",
            f"board: {board.settings.roster.name} roster, {len(board.souls.roles())} roles, "
            f"model {board.settings.agent.default_model}",
        ]
        running = board.room.running()
        if running:
            lines.append(f"meetings running: {', '.join(running)}")
        for channel in self.channels or []:
            lines.extend(channel.status_lines())
        if not self.channels:
            lines.append("channels: none (set telegram.token to connect Telegram)")
        return "\n".join(lines)

    async def _cmd_status(self, envelope: Envelope, route: Route) -> str:
        return self.status_text()

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
        return web.json_response(body)

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
        result = reload_config(self.loaded.source, self.loaded, board=self.board, hub=self.hub,
                               channels=self.channels or [])
        if result.loaded is not None:
            self.loaded = result.loaded

    async def run(self) -> int:
        """Run until :meth:`request_stop` (or a signal); returns the exit code."""
        loop = asyncio.get_running_loop()
        owns_board = self.board is None
        if self.board is None:
            self.board = await open_board(self.loaded)
        board = self.board
        signals: list[signal.Signals] = []
        reload_signal = ReloadSignal(self.request_reload)  # SIGHUP
        stop_watch = asyncio.Event()
        watcher: asyncio.Task[None] | None = None
        started: list[Channel] = []
        try:
            if self.channels is None:
                self.channels = build_channels(self.loaded, board, self.hub)
            board.register_command("status", self._cmd_status, "/status: uptime, channels and topics")
            if self.install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    with contextlib.suppress(NotImplementedError, RuntimeError):
                        loop.add_signal_handler(sig, self.request_stop)
                        signals.append(sig)
                reload_signal.install(loop)
            await self._start_server()
            watcher = asyncio.create_task(board.souls.watch(stop_watch), name="soul watcher")
            for channel in self.channels:
                await channel.start()
                started.append(channel)
            if not self.channels:
                log.warning("no channels configured: set telegram.token (see README, 'Telegram'); "
                            "serving only http://%s:%s/healthz", self.loaded.config.server.host, self.port)
            log.info("sabha %s running: %d channel(s), http on %s:%s", __version__, len(started),
                     self.loaded.config.server.host, self.port)
            self.ready.set()
            await self.stop_event.wait()
        finally:
            await self._shutdown(started, watcher, stop_watch)
            for sig in signals:
                loop.remove_signal_handler(sig)
            reload_signal.uninstall()
            if owns_board:
                await board.close()
        log.info("sabha stopped")
        return 0

    async def _start_server(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        for channel in self.channels or []:
            app.add_routes(channel.routes())
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        server = self.loaded.config.server
        site = web.TCPSite(self._runner, server.host, server.port)
        try:
            await site.start()
        except OSError as exc:
            raise OSError(f"cannot listen on {server.host}:{server.port} ({exc.strerror}); "
                          "change server.port in the config or stop the other process") from exc
        sockets = getattr(site._server, "sockets", None)  # aiohttp has no public accessor
        self.port = sockets[0].getsockname()[1] if sockets else server.port

    async def _shutdown(self, started: list[Channel], watcher: asyncio.Task[None] | None,
                        stop_watch: asyncio.Event) -> None:
        for channel in started:
            with contextlib.suppress(Exception):
                await channel.stop_intake()
        assert self.board is not None
        grace = self.hub.settings.shutdown_grace_s
        try:
            # Running answers and meetings finish within the grace; queued messages stay
            # stored and are answered at the next start.
            await asyncio.gather(self.hub.drain(grace), self.board.room.drain(min(self.meeting_grace, grace)))
        except Exception:  # shutting down anyway
            log.exception("waiting for running answers and meetings failed")
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


async def run_daemon(loaded: LoadedConfig) -> int:
    """Entry point of ``sabha run``."""
    return await Daemon(loaded).run()
