"""The base of the fake LLM APIs: an aiohttp server on 127.0.0.1 and a scripted reply queue.

:class:`LocalServer` starts an aiohttp app on a free port of 127.0.0.1. A stopped one keeps its port
(:class:`PortKeeper`: bound, not listening, so a connection is refused as when the service is down) until it is
started again there or left (``async with`` / :meth:`LocalServer.release_port`): under xdist another worker's server
could otherwise take the freed port, and a client of the stopped service would find that server answering.
:class:`ScriptedServer`
adds what every fake API shares: one scripted entry answers one HTTP request, every request is
recorded, and the wire-level faults (an error status, a slow reply, a dropped connection, a raw
body such as an HTML page or a 200 that is not JSON) are served the same way for every API.
:class:`LLMServer` adds what the fake chat APIs share: their reply types (text, tool calls, an
in-stream error, an empty answer), the request flow (key and header checks, the body checks,
the scripted reply, a JSON answer or a server-sent event stream) and the 404 for unknown paths.
Subclasses add the API's wire format: its error bodies, request checks, usage and answers.

User memory's extractions (run in the background after a turn; recognised by their instructions,
:data:`MEMORY_MARKER`) are kept apart so they never take a scripted reply nor show in
``requests``: an :class:`LLMServer` records them in ``memory_requests`` and answers them with
``memory_text`` (by default: no facts).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import secrets
import socket
import string
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Self, TypeVar

from aiohttp import web
from multidict import CIMultiDict

__all__ = [
    "HTML_ERROR_PAGE",
    "MEMORY_MARKER",
    "NOT_JSON_BODY",
    "Answer",
    "DelayReply",
    "DisconnectReply",
    "EmptyReply",
    "ErrorReply",
    "LLMServer",
    "LocalServer",
    "PortKeeper",
    "RawReply",
    "RecordedRequest",
    "ScriptedServer",
    "StreamErrorReply",
    "TextReply",
    "ToolCallsReply",
    "approx_tokens",
    "pieces",
    "random_id",
    "serve_locally",
]

#: What a proxy in front of an API sends when the API is down (with 200 or a 5xx).
HTML_ERROR_PAGE = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)
#: A JSON answer cut short: ``Content-Type: application/json`` but not parseable.
NOT_JSON_BODY = '{"id": "cut-short", "object": "chat.completion", "choi'

_ALNUM = string.ascii_letters + string.digits
#: What the instructions of a memory extraction (board.memory.extract.EXTRACT_SYSTEM) begin with.
MEMORY_MARKER = b"You keep the long-term memory of an advisory board about one person."


def random_id(n: int) -> str:
    """``n`` random letters and digits (request and message ids)."""
    return "".join(secrets.choice(_ALNUM) for _ in range(n))


def approx_tokens(text: str) -> int:
    """Deterministic token estimate: ceil(len / 4), at least 1 for non-empty text."""
    return math.ceil(len(text) / 4) if text else 0


def pieces(text: str) -> list[str]:
    """Split text into word-ish stream pieces that concatenate back to the text."""
    return re.findall(r"\s*\S+|\s+", text)


# --------------------------------------------------------------------------- replies every API shares


@dataclass(frozen=True)
class ErrorReply:
    """An error status with the API's JSON error body."""

    status: int
    body: Any  # JSON-serialisable
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DelayReply:
    """Wait ``seconds`` (woken early by ``stop()``), then answer with ``then``."""

    seconds: float
    then: Any = None  # a reply of the API; None: the default text reply


@dataclass(frozen=True)
class RawReply:
    """Anything else: e.g. an HTML 502 from a proxy, or a 200 that is not JSON."""

    status: int
    body: bytes | str
    content_type: str = "text/plain"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DisconnectReply:
    """Close the connection without answering (the SDK raises APIConnectionError)."""


# --------------------------------------------------------------------------- replies of the LLM APIs

C = TypeVar("C")


@dataclass(frozen=True)
class TextReply:
    """A text answer; ``stop`` is the API's stop (finish) reason, e.g. the one of a max-tokens cut."""

    text: str
    stop: str
    usage: Mapping[str, Any] | None = None  # overrides the estimated usage fields
    chunk_delay: float = 0.0  # seconds between streamed events
    thinking: str | None = None  # Anthropic: a thinking block before the text (not streamed)


@dataclass(frozen=True)
class ToolCallsReply(Generic[C]):
    """Tool calls (``C``: the API's call type), with the text sent alongside them."""

    calls: tuple[C, ...]
    text: str | None = None
    usage: Mapping[str, Any] | None = None
    chunk_delay: float = 0.0


@dataclass(frozen=True)
class StreamErrorReply:
    """For stream=True: send some text, then the API's in-stream error event."""

    text_before: str
    body: Mapping[str, Any]


@dataclass(frozen=True)
class EmptyReply:
    """A 200 answer with nothing in it: no choices / no content blocks (a broken upstream)."""


LLMReply = TextReply | ToolCallsReply[Any] | StreamErrorReply | EmptyReply


@dataclass(frozen=True)
class Answer:
    """What one request is answered with: the ``reply`` to its ``body`` and the ``usage`` reported.

    For a :class:`StreamErrorReply` the ``reply`` is its text and ``error`` the event that ends the
    stream instead of the API's usual end.
    """

    body: dict[str, Any]
    reply: TextReply | ToolCallsReply[Any]
    usage: dict[str, Any]
    error: Mapping[str, Any] | None = None

    @property
    def model(self) -> str:
        """The model the request names."""
        return str(self.body["model"])


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: CIMultiDict[str]  # case-insensitive
    body: Any  # parsed JSON, or None when the body was not JSON
    raw: bytes
    received_at: float

    @property
    def json(self) -> Any:
        """The parsed JSON body."""
        return self.body


# --------------------------------------------------------------------------- servers


async def serve_locally(app: web.Application, port: int = 0, **runner_options: Any) -> tuple[web.AppRunner, int]:
    """Serve ``app`` on ``port`` (0: a free one) of 127.0.0.1 (no access log); the runner and the port."""
    runner = web.AppRunner(app, access_log=None, **runner_options)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    server = site._server  # aiohttp exposes no public accessor
    assert server is not None and server.sockets
    return runner, server.sockets[0].getsockname()[1]


def _bound(port: int) -> socket.socket:
    """A TCP socket bound to 127.0.0.1:``port`` (0: a free one), not listening. SO_REUSEPORT lets the next one of
    ours bind the same port while this one still listens (the port is never free in between); no SO_REUSEADDR, or
    a server with it (aiohttp's TCPSite) could bind the port while it is held by a socket that does not listen.
    A socket bound to port 0 is never given a port another socket holds, so no other server can share it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


class PortKeeper:
    """One port of 127.0.0.1 kept for a fake across its stops and restarts (see the module docstring).

    :meth:`listen_socket` hands out the socket to serve on (the kept one, else a new one bound to the port);
    :meth:`keep` binds a placeholder before the server's own socket closes; :meth:`release` frees the port.
    """

    def __init__(self) -> None:
        self.port: int | None = None
        self._held: socket.socket | None = None

    def listen_socket(self, port: int = 0) -> socket.socket:
        """The socket to serve on: the kept one (its port), else a new one on ``port`` (0: a free one)."""
        sock, self._held = self._held, None
        if sock is None:
            sock = _bound(port or self.port or 0)
        self.port = sock.getsockname()[1]
        return sock

    def keep(self) -> None:
        """Hold the port (bound, not listening) before the server's socket closes: connections are refused."""
        if self._held is None and self.port is not None:
            self._held = _bound(self.port)

    def release(self) -> None:
        """Free the port (the fake is done with it)."""
        if self._held is not None:
            self._held.close()
            self._held = None


async def serve_kept(app: web.Application, keeper: PortKeeper, **runner_options: Any) -> tuple[web.AppRunner, int]:
    """Serve ``app`` on ``keeper``'s port (a free one the first time), no access log; the runner and the port."""
    runner = web.AppRunner(app, access_log=None, **runner_options)
    await runner.setup()
    sock = keeper.listen_socket()
    try:
        await web.SockSite(runner, sock).start()
    except BaseException:
        sock.close()
        await runner.cleanup()
        raise
    assert keeper.port is not None
    return runner, keeper.port


class LocalServer:
    """Start on 127.0.0.1:0 with ``start()`` / ``async with``; subclasses add routes in :meth:`routes`.

    :meth:`stop` keeps the port (:class:`PortKeeper`) for :meth:`restart`; leaving ``async with`` releases it."""

    name = "fake server"

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._closing = asyncio.Event()
        self._keeper = PortKeeper()

    def routes(self, app: web.Application) -> None:
        """Add the API's routes to ``app``."""
        raise NotImplementedError

    async def start(self) -> Self:
        """Listen on a free port of 127.0.0.1."""
        return await self._listen(0)

    async def restart(self) -> Self:
        """Listen again on the port it had before :meth:`stop` (a service that comes back)."""
        return await self._listen(self.port)

    async def _listen(self, port: int) -> Self:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self.routes(app)
        self._closing = asyncio.Event()
        if port and self._keeper.port is None:
            self._keeper.port = port
        self._runner, self._port = await serve_kept(app, self._keeper, handler_cancellation=True,
                                                    shutdown_timeout=0.5)
        return self

    async def stop(self) -> None:
        """Wake pending delays and close the server; its port stays taken (refusing connections) for
        :meth:`restart` until :meth:`release_port`."""
        self._closing.set()
        if self._runner is not None:
            self._keeper.keep()
            await self._runner.cleanup()
            self._runner = None

    def release_port(self) -> None:
        """Free the port a stopped server keeps."""
        self._keeper.release()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
        self.release_port()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._port is None:
            raise RuntimeError(f"{self.name} is not started")
        return self._port


R = TypeVar("R")


class ScriptedServer(LocalServer, Generic[R]):
    """A :class:`LocalServer` answering from a script; see the module docstring.

    ``R`` is the API's own success reply type (text, tool calls, a stream error...).
    Subclasses implement :meth:`default_reply` and :meth:`error_body_for`.
    """

    def __init__(self, *, default_text: str) -> None:
        super().__init__()
        self.default_text = default_text
        self.requests: list[RecordedRequest] = []
        self._script: deque[R | ErrorReply | DelayReply | RawReply | DisconnectReply] = deque()
        self._request_event = asyncio.Event()

    # -- what a subclass supplies ----------------------------------------------------

    def text_reply(self, text: str, **kw: Any) -> R:
        """The API's plain text reply (``kw``: its stop reason, usage, chunk delay...)."""
        raise NotImplementedError

    def tool_calls_reply(self, calls: Sequence[Any], *, text: str | None = None) -> R:
        """The API's tool-call reply: ``[(name, args), (name, args, call_id), ...]``."""
        raise NotImplementedError

    def error_reply(
        self, status: int, kind: str, message: str | None = None, headers: Mapping[str, str] | None = None, **kw: Any
    ) -> ErrorReply:
        """The API's error body for ``status`` and its error kind."""
        raise NotImplementedError

    def stream_error_reply(self, text_before: str, kind: str | None, message: str | None) -> R:
        """For stream=True: some text, then the API's in-stream error."""
        raise NotImplementedError

    def empty_reply(self) -> R:
        """A 200 answer with nothing in it (no choices / no content blocks)."""
        raise NotImplementedError

    def default_reply(self, text: str) -> R:
        """What an empty script answers."""
        return self.text_reply(text)

    def response_headers(self) -> dict[str, str]:
        """Headers sent with every answer (request ids...)."""
        return {}

    # -- scripting ---------------------------------------------------------------------

    def script(self, *replies: R | ErrorReply | DelayReply | RawReply | DisconnectReply) -> None:
        """Queue replies; each answers one request."""
        self._script.extend(replies)

    def _push(self, reply: Any) -> Any:
        self._script.append(reply)
        return reply

    def script_text(self, text: str, **kw: Any) -> R:
        """Answer with ``text``."""
        reply: R = self._push(self.text_reply(text, **kw))
        return reply

    def script_tool_call(
        self, name: str, args: Mapping[str, Any] | str, call_id: str | None = None, *, text: str | None = None
    ) -> R:
        """Answer with one tool call."""
        spec = (name, args, call_id) if call_id else (name, args)
        reply: R = self._push(self.tool_calls_reply([spec], text=text))
        return reply

    def script_tool_calls(self, calls: Sequence[Any], *, text: str | None = None) -> R:
        """Answer with parallel tool calls."""
        reply: R = self._push(self.tool_calls_reply(calls, text=text))
        return reply

    def script_error(
        self, status: int, kind: str, message: str | None = None, headers: Mapping[str, str] | None = None, **kw: Any
    ) -> ErrorReply:
        """Answer with the API's error body."""
        reply: ErrorReply = self._push(self.error_reply(status, kind, message, headers, **kw))
        return reply

    def script_stream_error(self, text_before: str = "", kind: str | None = None, message: str | None = None) -> R:
        """For stream=True: some text, then an in-stream error (``kind`` defaults to the API's usual one)."""
        reply: R = self._push(self.stream_error_reply(text_before, kind, message))
        return reply

    def script_empty(self) -> R:
        """A 200 answer with no choices / no content blocks."""
        reply: R = self._push(self.empty_reply())
        return reply

    def script_delay(self, seconds: float, then: Any = None) -> DelayReply:
        """Wait ``seconds`` before answering with ``then`` (a reply, or text; None = default)."""
        nxt = self.default_reply(then) if isinstance(then, str) else then
        reply: DelayReply = self._push(DelayReply(seconds, nxt))
        return reply

    def script_raw(
        self, status: int, body: bytes | str, content_type: str = "text/plain", headers: Mapping[str, str] | None = None
    ) -> RawReply:
        """Answer with exactly these bytes."""
        reply: RawReply = self._push(RawReply(status, body, content_type, dict(headers or {})))
        return reply

    def script_not_json(self, status: int = 200) -> RawReply:
        """A JSON answer cut short: ``application/json`` that does not parse."""
        return self.script_raw(status, NOT_JSON_BODY, "application/json")

    def script_html(self, status: int = 502) -> RawReply:
        """A proxy's HTML error page (with 200 it looks like a success to the SDK)."""
        return self.script_raw(status, HTML_ERROR_PAGE, "text/html")

    def script_disconnect(self) -> DisconnectReply:
        """Drop the connection without an answer."""
        reply: DisconnectReply = self._push(DisconnectReply())
        return reply

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        return len(self._script)

    @property
    def last_request(self) -> RecordedRequest:
        """The most recent request."""
        return self.requests[-1]

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        self._script.clear()
        self.requests.clear()

    async def wait_for_requests(self, n: int, timeout: float = 60.0) -> None:
        """Wait until at least ``n`` requests were received."""

        async def _wait() -> None:
            while len(self.requests) < n:
                self._request_event.clear()
                await self._request_event.wait()

        await asyncio.wait_for(_wait(), timeout)

    # -- serving -------------------------------------------------------------------------

    async def record(self, request: web.Request) -> RecordedRequest:
        """Read and record ``request``."""
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(request.method, request.path, CIMultiDict(request.headers), body, raw, time.time())
        self.requests.append(rec)
        self._request_event.set()
        return rec

    async def next_reply(self) -> R | ErrorReply | RawReply | DisconnectReply:
        """The next scripted reply (the default text when the script is empty), delays served."""
        reply = self._script.popleft() if self._script else self.default_reply(self.default_text)
        while isinstance(reply, DelayReply):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), timeout=reply.seconds)
            reply = reply.then if reply.then is not None else self.default_reply(self.default_text)
        return reply

    def error_response(self, reply: ErrorReply) -> web.Response:
        """The API's error answer."""
        headers = self.response_headers()
        if isinstance(reply.body, dict) and reply.body.get("request_id"):
            headers["request-id"] = str(reply.body["request_id"])
        headers.update(reply.headers)
        return web.json_response(reply.body, status=reply.status, headers=headers)

    def wire_fault(self, request: web.Request, reply: object) -> web.Response | None:
        """Serve an error, raw or disconnect reply; None for the API's own replies."""
        if isinstance(reply, ErrorReply):
            return self.error_response(reply)
        if isinstance(reply, RawReply):
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            resp = web.Response(status=reply.status, body=data, headers=dict(reply.headers))
            resp.content_type = reply.content_type
            return resp
        if isinstance(reply, DisconnectReply):
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError  # ends the handler without writing anything
        return None


class LLMServer(ScriptedServer[LLMReply]):
    """A fake chat API at ``path``: the request flow every LLM API shares; see the module docstring.

    Subclasses set the class attributes and implement :meth:`error_reply` (the API's error body) and
    the wire-format hooks below (:meth:`tool_call`, :meth:`check_headers`, :meth:`unknown_path_error`,
    :meth:`check_request`, :meth:`usage`, :meth:`json_answer`, :meth:`write_stream`, :meth:`clear_cache`).
    """

    #: The endpoint the SDK posts to.
    path: ClassVar[str]
    #: What the SDK appends the endpoint path to, after the server root.
    sdk_prefix: ClassVar[str] = ""
    #: What an empty script answers unless the constructor says otherwise.
    DEFAULT_TEXT: ClassVar[str]
    #: The shortest prompt (in tokens) the API caches, unless the constructor says otherwise.
    CACHE_MIN_TOKENS: ClassVar[int] = 0
    #: The keyword of :meth:`script_text` for the stop reason (e.g. of a max-tokens cut), and its default.
    stop_keyword: ClassVar[str]
    usual_stop: ClassVar[str]
    #: The error kind of an in-stream error when the script names none.
    stream_error_kind: ClassVar[str]
    #: The message of the 400 for a body that is not JSON.
    not_json_message: ClassVar[str]
    #: The key of the answer's list that :meth:`script_empty` leaves empty.
    empty_field: ClassVar[str]
    #: The output tokens a tool call costs besides its name and arguments.
    call_tokens: ClassVar[int]
    #: What a memory extraction is answered (see the module docstring).
    memory_text: str = '{"facts": []}'

    @property
    def memory_requests(self) -> list[RecordedRequest]:
        """The memory extractions received (never in ``requests``)."""
        return self.__dict__.setdefault("_memory_requests", [])

    def __init__(
        self,
        *,
        default_text: str | None = None,
        api_key: str | None = None,
        validate: bool = True,
        cache_min_tokens: int | None = None,
    ) -> None:
        """
        api_key: if set, a request without it (see :meth:`check_headers`) gets 401.
        validate: reject malformed tool-call transcripts with 400, like the API.
        cache_min_tokens: prompts (prefixes) shorter than this never report cached tokens.
        """
        super().__init__(default_text=self.DEFAULT_TEXT if default_text is None else default_text)
        self.api_key = api_key
        self.validate = validate
        self.cache_min_tokens = self.CACHE_MIN_TOKENS if cache_min_tokens is None else cache_min_tokens
        self.clear_cache()

    def routes(self, app: web.Application) -> None:
        app.router.add_post(self.path, self._handle)
        app.router.add_route("*", "/{tail:.*}", self._handle_unknown)

    @property
    def url(self) -> str:
        """The server root."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For the SDK client's ``base_url=``."""
        return self.url + self.sdk_prefix

    # -- what a subclass supplies ----------------------------------------------------

    def tool_call(self, name: str, args: Any, call_id: str | None = None) -> Any:
        """One of the API's tool calls (with a fresh id when ``call_id`` is None)."""
        raise NotImplementedError

    def check_headers(self, request: web.Request) -> ErrorReply | None:
        """The API's error for a wrong key or a missing header; None when they are right."""
        raise NotImplementedError

    def unknown_path_error(self, request: web.Request) -> ErrorReply:
        """The API's 404 for a path it does not serve."""
        raise NotImplementedError

    def check_request(self, body: dict[str, Any]) -> ErrorReply | None:
        """The API's 400 for a malformed request body; None when it is fine."""
        raise NotImplementedError

    def usage(self, body: dict[str, Any], output: int, override: Mapping[str, Any] | None) -> dict[str, Any]:
        """The usage the API reports for ``output`` tokens answering ``body``, with the ``override``
        fields of a scripted reply (updating the prompt cache)."""
        raise NotImplementedError

    def json_answer(self, answer: Answer) -> dict[str, Any]:
        """The API's JSON answer."""
        raise NotImplementedError

    async def write_stream(self, resp: web.StreamResponse, answer: Answer) -> None:
        """Write the API's server-sent events for ``answer`` (its text and its error for a stream error)."""
        raise NotImplementedError

    def clear_cache(self) -> None:
        """Forget the prompts seen (as if the cache had expired)."""
        raise NotImplementedError

    # -- the replies every LLM API shares ----------------------------------------------

    def text_reply(self, text: str, **kw: Any) -> TextReply:
        """``kw``: the stop reason by the API's name (:attr:`stop_keyword`), ``usage``, ``chunk_delay``,
        ``thinking`` (Anthropic's thinking block before the text)."""
        return TextReply(text, kw.pop(self.stop_keyword, self.usual_stop), **kw)

    def tool_calls_reply(self, calls: Sequence[Any], *, text: str | None = None) -> LLMReply:
        return ToolCallsReply(tuple(self.tool_call(*c) for c in calls), text)

    def stream_error_reply(self, text_before: str, kind: str | None, message: str | None) -> LLMReply:
        return StreamErrorReply(text_before, self.error_reply(500, kind or self.stream_error_kind, message).body)

    def empty_reply(self) -> LLMReply:
        return EmptyReply()

    def output_tokens(self, reply: LLMReply) -> int:
        """The estimated output of ``reply``: its text, and :attr:`call_tokens` plus the name and
        arguments of each call."""
        if isinstance(reply, TextReply):
            return max(1, approx_tokens(reply.text))
        if isinstance(reply, ToolCallsReply):
            calls = sum(self.call_tokens + approx_tokens(c.name + c.arguments) for c in reply.calls)
            return approx_tokens(reply.text or "") + calls
        return max(1, approx_tokens(getattr(reply, "text_before", "")))

    def reset(self) -> None:
        super().reset()
        self.clear_cache()

    # -- serving -------------------------------------------------------------------------

    async def _handle_unknown(self, request: web.Request) -> web.StreamResponse:
        await self.record(request)
        return self.error_response(self.unknown_path_error(request))

    def _check(self, request: web.Request, body: Any) -> ErrorReply | None:
        problem = self.check_headers(request)
        if problem is None and not isinstance(body, dict):
            problem = self.error_reply(400, "invalid_request_error", self.not_json_message)
        if problem is None:
            problem = self.check_request(body)
        return problem

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        rec = await self.record(request)
        body = rec.body
        problem = self._check(request, body)
        if problem is not None:
            return self.error_response(problem)

        if MEMORY_MARKER in rec.raw:  # a memory extraction: apart from the script and the recorded turns
            self.requests.remove(rec)
            self.memory_requests.append(rec)
            reply: Any = self.text_reply(self.memory_text)
        else:
            reply = await self.next_reply()
        fault = self.wire_fault(request, reply)
        if fault is not None:
            return fault
        assert isinstance(reply, (TextReply, ToolCallsReply, StreamErrorReply, EmptyReply))
        usage = self.usage(body, self.output_tokens(reply), getattr(reply, "usage", None))
        if isinstance(reply, EmptyReply):
            empty = self.json_answer(Answer(body, self.text_reply(""), usage))
            empty[self.empty_field] = []
            return web.json_response(empty, headers=self.response_headers())
        if isinstance(reply, StreamErrorReply):
            answer = Answer(body, self.text_reply(reply.text_before), usage, reply.body)
        else:
            answer = Answer(body, reply, usage)
        if body.get("stream"):
            return await self._stream(request, answer)
        assert answer.error is None, "an in-stream error needs stream=True"
        return web.json_response(self.json_answer(answer), headers=self.response_headers())

    async def _stream(self, request: web.Request, answer: Answer) -> web.StreamResponse:
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
        resp = web.StreamResponse(status=200, headers={**headers, **self.response_headers()})
        await resp.prepare(request)
        await self.write_stream(resp, answer)
        await resp.write_eof()
        return resp
