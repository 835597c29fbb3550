"""Failure handling for model calls, in one place (seed 001 §5.6).

For each model of the chain (the role's model, then ``llm.fallbacks`` in order):
every call runs under a deadline; a timeout, 429, 5xx or connection error is retried
(``llm.retry.retries`` times, default once) after a jittered exponential backoff that
honours the server's ``retry-after`` up to a cap; an error retrying cannot fix (bad
key, bad request, unknown provider) is logged with its reason and not retried. Then the
next model is tried. When every model failed, the caller gets the last error and
answers gracefully; nothing here raises :class:`LLMError`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from board.llm.base import LLMError, LLMRequest, LLMResponse
from board.llm.errors import missing_key_extra
from board.llm.registry import ProviderRegistry, UnknownModelError, split_model

__all__ = [
    "Attempt",
    "AttemptHook",
    "CallResult",
    "RequestFit",
    "ResilientCaller",
    "RetryPolicy",
    "model_chain",
]

log = logging.getLogger("sabha.llm")


@dataclass(frozen=True)
class RetryPolicy:
    """Deadlines and retries for model calls (``llm.timeout_s`` and ``llm.retry``)."""

    timeout_s: float = 60.0
    retries: int = 1
    backoff_s: float = 0.4
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 20.0

    def backoff(self, retry: int, retry_after: float | None, rand: float) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); ``rand`` in [0, 1)."""
        delay: float = min(self.backoff_max_s, self.backoff_s * (2 ** (retry - 1))) * (0.5 + rand)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay


@dataclass(frozen=True)
class Attempt:
    """One provider call: which model, how it went and how long it took."""

    model: str
    provider: str
    number: int
    outcome: str  # "ok" or the error kind
    latency_ms: float
    response: LLMResponse | None = None
    error: str | None = None
    status: int | None = None

    @property
    def ok(self) -> bool:
        """True when the call returned an answer."""
        return self.response is not None


@dataclass(frozen=True)
class CallResult:
    """What the chain produced: a response (or None) and every attempt made."""

    response: LLMResponse | None
    model: str | None
    attempts: tuple[Attempt, ...]
    error: LLMError | None = None


AttemptHook = Callable[[Attempt], Awaitable[None] | None]
#: Fits a request to the one model it is about to be sent to (``request.model``): e.g. no
#: pictures for a model that cannot see them (:func:`board.llm.vision.for_model`).
RequestFit = Callable[[LLMRequest], LLMRequest]


def model_chain(primary: str, fallbacks: Sequence[str]) -> list[str]:
    """``primary`` then ``fallbacks``, without repeats."""
    chain: list[str] = []
    for model in (primary, *fallbacks):
        if model and model not in chain:
            chain.append(model)
    return chain


class ResilientCaller:
    """Calls models through the registry with deadlines, retries and fallbacks."""

    def __init__(
        self,
        providers: ProviderRegistry,
        policy: RetryPolicy,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.providers = providers
        self.policy = policy
        self._sleep = sleep
        self._rand = rand

    def streams(self, model: str) -> bool:
        """Whether ``model``'s provider streams (False for one that cannot be resolved: it fails later, clearly)."""
        try:
            return bool(getattr(self.providers.resolve(model), "streams", False))
        except ValueError:
            return False

    async def _once(self, request: LLMRequest, seconds: float) -> LLMResponse:
        await self.providers.settled()  # a model SDK still loading in the background (a meeting at start)
        try:
            provider = self.providers.resolve(request.model)
        except UnknownModelError as exc:
            raise LLMError(str(exc), kind="config") from exc
        try:
            async with asyncio.timeout(seconds):
                return await provider.complete(request)
        except TimeoutError as exc:
            raise LLMError(f"{request.model}: no answer within {seconds:g} s (llm.timeout_s)",
                           retryable=True, kind="timeout") from exc

    async def call(
        self,
        request: LLMRequest,
        chain: Sequence[str],
        *,
        deadline: float | None = None,
        on_attempt: AttemptHook | None = None,
        fit: RequestFit | None = None,
    ) -> CallResult:
        """Try ``request`` on each model of ``chain``; see the module docstring.

        ``deadline`` is an event-loop time; no call or backoff runs past it. ``fit`` adapts the
        request to each model of the chain before it is sent there.
        """
        loop = asyncio.get_running_loop()
        attempts: list[Attempt] = []
        last_error: LLMError | None = None
        for model in chain:
            attempt_request = _with_model(request, model)
            if fit is not None:
                attempt_request = fit(attempt_request)
            for number in range(1, self.policy.retries + 2):
                timeout = self.policy.timeout_s
                if deadline is not None:
                    timeout = min(timeout, deadline - loop.time())
                    if timeout <= 0:
                        last_error = LLMError("the turn ran out of time before a model answered", kind="timeout")
                        return CallResult(None, None, tuple(attempts), last_error)
                started = time.perf_counter()
                try:
                    response = await self._once(attempt_request, timeout)
                except asyncio.CancelledError:
                    raise
                except LLMError as exc:
                    error = exc
                except Exception as exc:
                    log.exception("model %s: unexpected failure", model)
                    error = LLMError(f"{model}: unexpected {type(exc).__name__}: {exc}", kind="other")
                else:
                    attempt = Attempt(model, split_model(model)[0], number, "ok",
                                      _ms(started), response=response)
                    attempts.append(attempt)
                    await _notify(on_attempt, attempt)
                    return CallResult(response, model, tuple(attempts))
                attempt = Attempt(model, split_model(model)[0], number, error.kind, _ms(started),
                                  error=str(error), status=error.status)
                attempts.append(attempt)
                await _notify(on_attempt, attempt)
                last_error = error
                if not error.retryable:
                    log.error("model %s failed, not retrying: %s", model, error, extra=missing_key_extra(error))
                    break
                if number > self.policy.retries:
                    log.warning("model %s failed again: %s", model, error)
                    break
                if error.retry_after is not None and error.retry_after > self.policy.retry_after_max_s:
                    log.warning("model %s: %s; the server asks to wait %.0f s (cap llm.retry.retry_after_max_s "
                                "= %g s), moving on", model, error, error.retry_after, self.policy.retry_after_max_s)
                    break
                delay = self.policy.backoff(number, error.retry_after, self._rand())
                if deadline is not None and loop.time() + delay >= deadline:
                    break
                log.warning("model %s failed (%s); retrying in %.2f s", model, error, delay)
                await self._sleep(delay)
        if len(chain) > 1:
            log.error("every model failed (%s); answering without a model", ", ".join(chain))
        return CallResult(None, None, tuple(attempts), last_error)


def _with_model(request: LLMRequest, model: str) -> LLMRequest:
    return request if request.model == model else replace(request, model=model)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


async def _notify(hook: AttemptHook | None, attempt: Attempt) -> None:
    if hook is None:
        return
    try:
        result = hook(attempt)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("recording a model call failed")
