"""Helpers for the Telegram tests: settings pointed at the fake Bot API, a running channel,
and small model providers (scripted answers, a gate for concurrency, a call counter)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from board.app import Board
from board.llm.base import LLMRequest, LLMResponse, Usage
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.config import TelegramSection
from bot.daemon import channel_parts
from tests.support.fakes.telegram_api import FakeTelegramAPI

TOKEN = "123456:TEST-token_abc"
FORUM = -1001234567890
OWNER = 42
FRIEND = 43
STRANGER = 666
SPECIALISTS = ("research", "content", "finance", "strategy", "critic")

FAST = {"group_per_minute": 6000, "private_per_second": 100, "global_per_second": 1000, "max_retries": 3}


def tg_settings(fake: FakeTelegramAPI, **overrides: Any) -> TelegramSection:
    """A telegram section for the fake, with budgets that never slow a test down."""
    data: dict[str, Any] = {
        "token": TOKEN,
        "api_base_url": fake.base_url,
        "group_id": FORUM,
        "allowed_user_ids": [OWNER, FRIEND],
        "rate_limit": dict(FAST),
    }
    data.update(overrides)
    return TelegramSection.model_validate(data)


@contextlib.asynccontextmanager
async def running(board: Board, settings: TelegramSection, **kwargs: Any) -> AsyncIterator[TelegramChannel]:
    """A started channel (polling the fake), stopped afterwards."""
    kwargs.setdefault("poll_timeout", 1)
    channel = TelegramChannel(channel_parts(board), settings, **kwargs)
    await channel.start()
    try:
        yield channel
    finally:
        await channel.stop()


def last_user_text(request: LLMRequest) -> str:
    """The text the model is asked to answer."""
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


#: What the small providers answer a memory extraction (issue 26): no facts, so tests count only turns.
NO_FACTS = LLMResponse(text='{"facts": []}', model="offline", usage=Usage(input_tokens=1, output_tokens=1))


@dataclass
class RecordingModel:
    """A provider that answers with ``answer(request)`` and records every call."""

    answer: Callable[[LLMRequest], str] = lambda r: f"{r.persona.name} answers: {last_user_text(r)}"
    name: str = "offline"
    calls: list[LLMRequest] = field(default_factory=list)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if request.metadata.get("purpose") == "extraction":  # user memory's extraction, after the turn: not a call here
            return NO_FACTS
        self.calls.append(request)
        text = self.answer(request)
        return LLMResponse(text=text, model="offline", usage=Usage(input_tokens=1, output_tokens=1))


@dataclass
class GatedModel:
    """A slow provider: a call whose user text is in ``gates`` waits for that event first.

    Records ``("start", text)`` / ``("end", text)`` so tests can check overlap and order.
    """

    gates: dict[str, asyncio.Event] = field(default_factory=dict)
    started: dict[str, asyncio.Event] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)
    name: str = "offline"

    def started_event(self, text: str) -> asyncio.Event:
        return self.started.setdefault(text, asyncio.Event())

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if request.metadata.get("purpose") == "extraction":  # user memory's extraction, after the turn: not gated
            return NO_FACTS
        text = last_user_text(request).rsplit(": ", 1)[-1]  # group messages arrive as "<sender>: <text>"
        self.log.append(("start", text))
        self.started_event(text).set()
        gate = self.gates.get(text)
        if gate is not None:
            await asyncio.wait_for(gate.wait(), 10)
        self.log.append(("end", text))
        return LLMResponse(text=f"{request.persona.name} on {text}", model="offline",
                           usage=Usage(input_tokens=1, output_tokens=1))


class VirtualClock:
    """A monotonic clock that only moves when something sleeps on it (records the sleeps)."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.t += seconds
        await asyncio.sleep(0)


class ManualClock:
    """A monotonic clock that moves only when the test calls :meth:`advance`; a sleeper
    wakes once the clock has passed its time."""

    def __init__(self) -> None:
        self.t = 1000.0
        self._moved = asyncio.Event()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        until = self.t + seconds
        while self.t < until:
            await self._moved.wait()

    def advance(self, seconds: float) -> None:
        self.t += seconds
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()


def use_model(board: Board, model: Any) -> Any:
    """Make every ``offline`` turn of ``board`` use ``model``."""
    board.parts.providers.register("offline", lambda: model)
    return model


async def eventually(predicate: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Wait until ``predicate()`` (awaited if it returns an awaitable) is true (``timeout``: a bound for what
    never comes, not a measure of speed: a loaded machine is slow)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
