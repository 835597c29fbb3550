"""Helpers for the operations tests: a unix datagram socket standing in for systemd's
notify socket, and reading ``/readyz`` and ``/metrics`` of a daemon."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import tempfile
import uuid
from pathlib import Path
from typing import Any

from aiohttp import ClientSession
from prometheus_client.parser import text_string_to_metric_families


class NotifyListener:
    """A bound ``SOCK_DGRAM`` socket (abstract ``@name`` or a short path) collecting every
    datagram as a list of ``KEY=VALUE`` lines."""

    def __init__(self, *, abstract: bool = True) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self._dir: str | None = None
        if abstract:
            self.name = f"@sabha-test-{uuid.uuid4().hex}"
            self.sock.bind("\0" + self.name[1:])
        else:
            self._dir = tempfile.mkdtemp(prefix="sn", dir="/tmp")  # a unix path is at most 107 bytes
            self.name = os.path.join(self._dir, "notify")
            self.sock.bind(self.name)
        self.datagrams: list[list[str]] = []
        self._event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def env(self) -> dict[str, str]:
        """What points a process at this socket."""
        return {"NOTIFY_SOCKET": self.name}

    @property
    def lines(self) -> list[str]:
        """Every line received so far, in order."""
        return [line for datagram in self.datagrams for line in datagram]

    async def __aenter__(self) -> NotifyListener:
        self._task = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.sock.close()
        if self._dir is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.name)
                os.rmdir(self._dir)

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            data = await loop.sock_recv(self.sock, 65536)
            self.datagrams.append(data.decode().split("\n"))
            self._event.set()

    async def wait_for(self, prefix: str, timeout: float = 60.0) -> str:
        """The first line starting with ``prefix`` (waits for it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for line in self.lines:
                if line.startswith(prefix):
                    return line
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"no {prefix!r} in {timeout} s; received {self.datagrams}")
            self._event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), left)


async def get_json(port: int, path: str) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) of ``GET path`` on the daemon."""
    async with ClientSession() as http, http.get(f"http://127.0.0.1:{port}{path}") as resp:
        return resp.status, await resp.json()


async def scrape(port: int) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """``/metrics`` parsed with prometheus_client's parser: sample name -> {sorted labels: value}."""
    async with ClientSession() as http, http.get(f"http://127.0.0.1:{port}/metrics") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain")
        text = await resp.text()
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def total(samples: dict[str, dict[tuple[tuple[str, str], ...], float]], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(value for key, value in samples.get(name, {}).items() if set(labels.items()) <= set(key))


def short_tmp() -> Path:
    """A short temporary folder (unix socket paths are limited to 107 bytes)."""
    return Path(tempfile.mkdtemp(prefix="sabha", dir="/tmp"))
