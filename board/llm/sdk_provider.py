"""What the SDK-backed providers (OpenAI, Anthropic, Gemini) share: one client made on first use, its
closing, and one translation of SDK failures into :class:`LLMError`.

Both official SDKs raise the same shapes under the same names (``APITimeoutError``,
``APIConnectionError``, ``APIStatusError``, ``APIError``); a subclass names its SDK and that
SDK's base exception (:meth:`SDKErrors.of`) and implements the request (``_params``) and the call (``_call``).
An answer that is not a usable completion is a transient ``bad_response`` error here, not
an unexpected exception: JSON cut short, a body the SDK could not model (an HTML page
served with 200 comes back as a plain ``str``), no choices, no content.

The HTTP under the SDKs is aiohttp (the SDKs' own ``DefaultAioHttpClient``: httpx's interface, aiohttp's
transport, the daemon's one HTTP stack), and a non-streamed answer is read once, as JSON, from the SDK's raw
response (``with_raw_response``: the SDK still sends, times out and raises the status errors), not modelled into
the SDK's pydantic tree and walked again. Each costs the daemon CPU on every model call; the figures are in
``notes/performance.md`` (cpu48).
"""

from __future__ import annotations

import contextlib
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from board.llm.base import LLMError, LLMRequest, LLMResponse
from board.llm.errors import (
    ProviderSettings,
    bad_response_error,
    connection_error,
    describe_body,
    missing_key_error,
    status_error,
    timeout_error,
)
from board.llm.registry import split_model

__all__ = ["SDKErrors", "SDKProvider", "answer_json", "as_sent", "garbage_error", "preview"]

#: What the SDKs raise while decoding an answer that is not what they expect (json's
#: JSONDecodeError and pydantic's ValidationError are ValueErrors; the SSE decoders assert).
_DECODE_ERRORS: tuple[type[Exception], ...] = (ValueError, TypeError, KeyError, AttributeError, AssertionError)


class _Closable(Protocol):
    def close(self) -> Awaitable[None]: ...


ClientT = TypeVar("ClientT", bound=_Closable)


@dataclass(frozen=True)
class SDKErrors:
    """The exception classes of one SDK, most specific first."""

    timeout: type[Exception] | tuple[type[Exception], ...]
    connection: type[Exception] | tuple[type[Exception], ...]
    status: type[Exception]
    api: type[Exception]
    base: type[Exception]

    @classmethod
    def of(cls, sdk: ModuleType, base: type[Exception]) -> SDKErrors:
        """The classes both official SDKs name alike (``sdk.APITimeoutError``...), and ``base``."""
        return cls(timeout=sdk.APITimeoutError, connection=sdk.APIConnectionError, status=sdk.APIStatusError,
                   api=sdk.APIError, base=base)


def preview(value: object, limit: int = 80) -> str:
    """A short, one-line view of an unexpected answer."""
    if isinstance(value, str):
        return describe_body(value, limit)
    return f"{type(value).__name__} {describe_body(repr(value), limit)}"


def garbage_error(provider: str, model: str, exc: BaseException) -> LLMError:
    """An SDK decoding failure as a transient ``bad_response`` error."""
    text = " ".join(str(exc).split())[:160]
    if type(exc).__name__ == "JSONDecodeError":
        return bad_response_error(provider, model, f"the body is not valid JSON ({text})")
    return bad_response_error(provider, model, f"the SDK could not read it ({type(exc).__name__}: {text})")


def _dropped(exc: BaseException) -> BaseException | None:
    """The aiohttp failure behind an SDK "timeout" that was no timeout, or None.

    The SDKs' aiohttp transport maps every ``aiohttp.ClientConnectionError`` it does not know better to
    httpx's ``ConnectTimeout`` (so the SDK raises ``APITimeoutError``): a connection the server dropped, or one
    reset, would be told as "no answer after 60 s". A real timeout of aiohttp's is a ``TimeoutError`` too."""
    import aiohttp  # the transport's own library, loaded already whenever a timeout can happen here

    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, aiohttp.ClientError):
            return None if isinstance(cause, TimeoutError) else cause
        cause = cause.__cause__
    return None


def answer_json(provider: str, model: str, content: bytes) -> dict[str, Any]:
    """A non-streamed answer's body as the JSON object it must be; a transient ``bad_response`` error for
    anything else (JSON cut short, a proxy's HTML page served with 200, a bare string)."""
    try:
        body = json.loads(content)
    except ValueError:
        described = describe_body(content.decode("utf-8", "replace"), 80)
        what = described if described.startswith("an HTML page") else f"the body is not valid JSON ({described})"
        raise bad_response_error(provider, model, what) from None
    if not isinstance(body, dict):
        raise bad_response_error(provider, model, f"not an answer object: {preview(body)}")
    return body


def as_sent(params: dict[str, Any], keys: tuple[str, ...], *,
            required: tuple[str, ...] = ("messages",)) -> dict[str, Any]:
    """``params`` with the ``keys`` present moved into ``extra_body``, which the SDK sends as
    they are (an empty list stands in for each of ``required``, which ``create()`` demands:
    ``messages`` in both SDKs).

    Both SDKs walk every request body through a recursive, type-introspecting transform
    (``_transform_recursive``) that renames aliased keys and base64-encodes file inputs.
    Sabha's messages, system blocks and tool schemas are plain JSON built here, with
    nothing to rename or encode, so the walk changes nothing; but it costs about 8 ms of
    event-loop time for a 40-message conversation, on every call (anthropic-sdk-python
    issue 1195 reports the same and this way round it). The body that leaves is identical."""
    moved = {key: params[key] for key in keys if key in params}
    if not moved:
        return params
    sent = {key: value for key, value in params.items() if key not in moved}
    sent["extra_body"] = {**moved, **(params.get("extra_body") or {})}
    for key in required:
        sent[key] = []
    return sent


class SDKProvider(ABC, Generic[ClientT]):
    """The shared half of an SDK-backed provider; see the module docstring."""

    name: ClassVar[str]
    title: ClassVar[str]  # "OpenAI", for messages
    default_key_env: ClassVar[str]
    errors: ClassVar[SDKErrors]

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._client: ClientT | None = None

    @property
    def key_env(self) -> str:
        """The environment variable named in key errors."""
        return self.settings.key_env or self.default_key_env

    def _api_key(self) -> str:
        """The key to use; raises a key error naming the variable when there is none."""
        if not self.settings.api_key:
            raise missing_key_error(self.name, self.key_env)
        return self.settings.api_key

    @abstractmethod
    def _make_client(self, api_key: str) -> ClientT:
        """A new SDK client with the SDK's own retries off."""

    @abstractmethod
    def _params(self, request: LLMRequest, model: str) -> dict[str, Any]:
        """The SDK call's keyword arguments."""

    @abstractmethod
    async def _call(self, client: ClientT, params: dict[str, Any], request: LLMRequest, model: str) -> LLMResponse:
        """Run the call and read the answer; raise :func:`bad_response_error` for an unusable one."""

    def _status_code(self, exc: Any) -> int | None:
        """The HTTP status of a status error (``status_code`` in the OpenAI and Anthropic SDKs)."""
        code = getattr(exc, "status_code", None)
        return code if isinstance(code, int) else None

    @abstractmethod
    def _status_detail(self, exc: Any) -> tuple[str, str | None]:
        """(message, error code) from an ``APIStatusError``'s body."""

    def _client_or_error(self) -> ClientT:
        if self._client is None:
            self._client = self._make_client(self._api_key())
        return self._client

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    @property
    def streams(self) -> bool:
        """Whether answers may be streamed (``llm.providers.<name>.stream`` is not false): their text then
        reaches ``on_delta``."""
        return self.settings.stream is not False

    def streamed(self, request: LLMRequest) -> bool:
        """Whether ``request`` is sent as a streamed call: always with ``stream: true``, with the default
        (unset) when someone watches the answer being written (``request.on_delta``), never with false."""
        return self.settings.stream is True or (self.settings.stream is None and request.on_delta is not None)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One call (streamed when configured), every failure as an :class:`LLMError`."""
        _, model = split_model(request.model)
        if not model:
            raise LLMError(
                f"model {request.model!r} names no {self.title} model; write {self.name}:<model>", kind="config"
            )
        client = self._client_or_error()
        params = self._params(request, model)
        with self.sdk_errors(model):
            return await self._call(client, params, request, model)
        raise AssertionError("unreachable")  # the block returns or raises; mypy cannot tell

    @contextlib.contextmanager
    def sdk_errors(self, model: str) -> Iterator[None]:
        """Every SDK failure inside the block as an :class:`LLMError`, classified (a chat call's and an
        audio call's alike)."""
        errors = self.errors
        try:
            yield
        except LLMError:
            raise
        except errors.timeout as exc:
            if (dropped := _dropped(exc)) is not None:
                raise connection_error(self.name, model, self.settings.base_url, dropped) from exc
            raise timeout_error(self.name, model, self.settings.timeout_s) from exc
        except errors.connection as exc:
            raise connection_error(self.name, model, self.settings.base_url, exc) from exc
        except errors.status as exc:
            message, code = self._status_detail(exc)
            response = getattr(exc, "response", None)
            raise status_error(
                self.name, model, self._status_code(exc), message,
                headers=dict(response.headers) if response is not None else None, code=code, key_env=self.key_env,
            ) from exc
        except errors.api as exc:  # no status: an error event mid-stream, an answer the SDK could not validate
            raise status_error(self.name, model, None, str(getattr(exc, "message", None) or exc)) from exc
        except errors.base as exc:
            raise LLMError(f"{self.name} ({model}): {exc}", kind="other") from exc
        except _DECODE_ERRORS as exc:
            if "Streaming is required" in str(exc):  # anthropic: max_tokens too large without a timeout
                raise LLMError(f"{self.name} ({model}): {exc}; lower llm.max_tokens", kind="config") from exc
            raise garbage_error(self.name, model, exc) from exc
