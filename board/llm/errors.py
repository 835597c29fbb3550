"""Turning provider failures into :class:`board.llm.base.LLMError` with advice a person can act on.

Both official SDKs raise the same shapes (timeout, connection error, an HTTP status
with a body and headers); the provider modules catch their SDK's classes and call
:func:`status_error`, :func:`timeout_error` or :func:`connection_error` here, so the
decision "is this worth retrying?" and the wording of the advice live in one place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from board.llm.base import LLMError

__all__ = [
    "MISSING_KEY_FIELD",
    "MissingKeyError",
    "ProviderSettings",
    "bad_response_error",
    "connection_error",
    "describe_body",
    "missing_key_error",
    "missing_key_extra",
    "retry_after_seconds",
    "status_error",
    "timeout_error",
]

#: 429 codes that no amount of waiting fixes.
_HOPELESS_429 = {"insufficient_quota", "billing_hard_limit_reached"}


@dataclass(frozen=True)
class ProviderSettings:
    """How to reach one provider: key, endpoint, client timeout, streaming.

    ``key_env`` is the environment variable named in errors about a missing or bad key.
    ``key_optional`` is true for OpenAI-compatible local servers (Ollama, vLLM...) that
    need no key.
    """

    api_key: str | None = None
    base_url: str | None = None
    timeout_s: float = 60.0
    key_env: str = ""
    #: True: every call streams; None: a call streams when its answer is watched as it is written (a
    #: channel that shows it: its request has ``on_delta``); False: no call streams
    stream: bool | None = False
    key_optional: bool = False


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's ``retry-after-ms`` / ``retry-after`` hint in seconds, if any."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        from email.utils import parsedate_to_datetime  # an HTTP date: rare, and email costs ~8 ms to import

        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())


#: The log record field (``extra``) naming the variable of a missing key: a front end that has
#: already told the person about that key (the terminal chat, when it opens) leaves such lines
#: to its log file instead of repeating them on every message.
MISSING_KEY_FIELD = "missing_key"


class MissingKeyError(LLMError):
    """A provider used without a key; ``key_env`` is the variable to export."""

    def __init__(self, message: str, key_env: str) -> None:
        super().__init__(message, retryable=False, kind="auth")
        self.key_env = key_env


def missing_key_error(provider: str, key_env: str) -> LLMError:
    """The error for a provider used without a key."""
    return MissingKeyError(
        f"{provider}: no API key: export {key_env}=... where Sabha runs (keys are read from the environment, "
        "never from sabha.yaml; a running `sabha run` needs a restart to see it)",
        key_env,
    )


def missing_key_extra(error: BaseException | None) -> dict[str, str]:
    """The ``extra`` of a log line about ``error``: :data:`MISSING_KEY_FIELD` when it is a missing key."""
    return {MISSING_KEY_FIELD: error.key_env} if isinstance(error, MissingKeyError) else {}


def status_error(
    provider: str,
    model: str,
    status: int | None,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
    key_env: str = "",
) -> LLMError:
    """An HTTP error status from ``provider`` as an LLMError with a reason and advice."""
    detail = describe_body(str(message))
    retry_after = retry_after_seconds(headers)
    where = f"{provider} ({model})"
    if status == 401:
        hint = f"export a valid {key_env} or set llm.providers.{provider}.api_key" if key_env else "check the API key"
        return LLMError(f"{where}: the API key was rejected (401: {detail}); {hint}", status=401, kind="auth")
    if status == 403:
        return LLMError(
            f"{where}: the API key may not use this model (403: {detail}); pick another model or check the account",
            status=403,
            kind="auth",
        )
    if status == 404:
        return LLMError(
            f"{where}: model or endpoint not found (404: {detail}); "
            f"check llm.model and llm.providers.{provider}.base_url",
            status=404,
            kind="bad_request",
        )
    if status == 429:
        if code in _HOPELESS_429:
            return LLMError(
                f"{where}: quota exhausted (429 {code}: {detail}); check the account's billing",
                status=429,
                kind="rate_limit",
            )
        return LLMError(
            f"{where}: rate limited (429: {detail})", retryable=True, status=429, kind="rate_limit",
            retry_after=retry_after,
        )
    if status in (408, 409) or (status is not None and status >= 500):
        return LLMError(
            f"{where}: server error ({status}: {detail})", retryable=True, status=status, kind="server",
            retry_after=retry_after,
        )
    if status == 200 or status is None:  # an error event in the middle of a stream
        return LLMError(f"{where}: the stream failed ({detail})", retryable=True, status=status, kind="server")
    return LLMError(f"{where}: request refused ({status}: {detail})", status=status, kind="bad_request")


def describe_body(text: str, limit: int = 300) -> str:
    """A server's answer text on one line; an HTML page is named by its title, not dumped."""
    if _HTML.search(text):
        title = _TITLE.search(text)
        name = " ".join(title.group(1).split()) if title else ""
        return f"an HTML page{f' titled {name!r}' if name else ''} instead of JSON (a proxy or gateway answered)"
    return " ".join(text.split())[:limit]


_HTML = re.compile(r"<\s*(!doctype\s+html|html|head|body)\b", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def bad_response_error(provider: str, model: str, what: str) -> LLMError:
    """A 200 answer that is not a usable completion (cut-short JSON, no choices, an HTML page).

    Transient: the next call usually gets a proper answer, so it is retried like a 5xx.
    """
    return LLMError(
        f"{provider} ({model}): unusable answer: {what} (usually transient; if it persists, check "
        f"llm.providers.{provider}.base_url and any proxy in front of it)",
        retryable=True,
        kind="bad_response",
    )


def timeout_error(provider: str, model: str, seconds: float | None) -> LLMError:
    """A call that took too long."""
    after = f" after {seconds:g} s" if seconds else ""
    return LLMError(f"{provider} ({model}): no answer{after}", retryable=True, kind="timeout")


def connection_error(provider: str, model: str, base_url: str | None, exc: BaseException) -> LLMError:
    """The endpoint could not be reached."""
    target = base_url or "the default endpoint"
    cause = exc.__cause__ or exc
    return LLMError(
        f"{provider} ({model}): cannot reach {target} ({type(cause).__name__}: {cause}); "
        f"check the network or llm.providers.{provider}.base_url",
        retryable=True,
        kind="connection",
    )
