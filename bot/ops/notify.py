"""systemd's notify protocol (``Type=notify``), written directly: no libsystemd.

A message is one datagram of ``KEY=VALUE`` lines sent to the unix socket named by
``$NOTIFY_SOCKET`` (a leading ``@`` names an abstract socket). :class:`Notifier` sends
``READY=1``, ``STATUS=...``, ``WATCHDOG=1``, ``EXTEND_TIMEOUT_USEC=...`` (a start that waits for its
state store is not killed by ``TimeoutStartSec``) and ``STOPPING=1``; without the variable, or
with a socket that is gone or refuses the datagram, every call does nothing and never
raises (a status message is not worth stopping the daemon for).

:func:`watchdog_interval` reads ``$WATCHDOG_USEC`` (and ``$WATCHDOG_PID``, which must be
this process when set) and returns half of it: systemd restarts a service that stays
silent for the whole period, so :func:`watchdog_pings` pings from the event loop at half
of it. A loop that hangs stops pinging, which is the point.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Mapping

__all__ = ["Notifier", "watchdog_interval", "watchdog_pings"]

log = logging.getLogger("sabha.notify")


def _address(name: str) -> str | None:
    if not name:
        return None
    if name.startswith("@"):
        return "\0" + name[1:]  # abstract namespace
    if name.startswith("/"):
        return name
    return None  # vsock (vsock:...) and other forms are not for us


class Notifier:
    """Sends notify messages to ``$NOTIFY_SOCKET`` (read once, from ``env`` or the process)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.socket_name = env.get("NOTIFY_SOCKET", "")
        self.address = _address(self.socket_name)
        self.sent = 0
        self.failed = 0
        self._warned = False
        if self.socket_name and self.address is None:
            log.warning("NOTIFY_SOCKET=%r is not a unix socket path or @abstract name; not notifying systemd",
                        self.socket_name)

    @property
    def enabled(self) -> bool:
        """True when there is a socket to notify."""
        return self.address is not None

    def send(self, *lines: str) -> bool:
        """Send ``lines`` (``KEY=VALUE``) as one datagram; False when it could not be sent."""
        if self.address is None:
            return False
        data = "\n".join(line.replace("\n", " ") for line in lines).encode("utf-8", "replace")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.setblocking(False)
                sock.sendto(data, self.address)
        except OSError as exc:
            self.failed += 1
            if not self._warned:  # once: a watchdog would repeat it every few seconds
                self._warned = True
                log.warning("cannot notify systemd at %s (%s); carrying on without it", self.socket_name, exc)
            return False
        self.sent += 1
        return True

    def ready(self, status: str | None = None) -> bool:
        """``READY=1``: start-up is complete (systemd considers the unit started)."""
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        """``STATUS=...``: one line shown by ``systemctl status``."""
        return self.send(f"STATUS={text}")

    def watchdog(self) -> bool:
        """``WATCHDOG=1``: the event loop is alive."""
        return self.send("WATCHDOG=1")

    def extend_timeout(self, seconds: float, status: str | None = None) -> bool:
        """``EXTEND_TIMEOUT_USEC=``: the start (or stop) goes on; systemd waits ``seconds`` more for the next word."""
        return self.send(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}", *([f"STATUS={status}"] if status else []))

    def stopping(self, status: str | None = None) -> bool:
        """``STOPPING=1``: shutdown has begun."""
        return self.send("STOPPING=1", *([f"STATUS={status}"] if status else []))


def watchdog_interval(env: Mapping[str, str] | None = None) -> float | None:
    """Seconds between watchdog pings (half of ``$WATCHDOG_USEC``), or None when the
    watchdog is off, malformed, or meant for another process (``$WATCHDOG_PID``)."""
    env = os.environ if env is None else env
    raw = env.get("WATCHDOG_USEC", "").strip()
    if not raw:
        return None
    pid = env.get("WATCHDOG_PID", "").strip()
    if pid and pid != str(os.getpid()):
        return None
    try:
        usec = int(raw)
    except ValueError:
        log.warning("WATCHDOG_USEC=%r is not a number of microseconds; not pinging the watchdog", raw)
        return None
    if usec <= 0:
        return None
    return usec / 2 / 1_000_000


async def watchdog_pings(notifier: Notifier, interval: float, stop: asyncio.Event) -> None:
    """Send ``WATCHDOG=1`` every ``interval`` seconds until ``stop`` is set."""
    while not stop.is_set():
        notifier.watchdog()
        try:
            await asyncio.wait_for(stop.wait(), interval)
        except TimeoutError:
            continue
