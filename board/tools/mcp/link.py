"""One server's connection and its life: :class:`ServerLink`.

A supervisor task connects the server with the official SDK (``mcp.Client`` over the command's stdin/stdout,
or over streamable HTTP), lists its tools (again when it says ``notifications/tools/list_changed``) and watches
it: a ping every few seconds, and every call that finds the connection closed, tell it the server died. A dead or
unreachable server is tried again after a backoff, 1 s doubling to 60 s (back to 1 s once it has stayed up a
minute). Stopping it ends the SDK's session, which closes the server's stdin and then kills its process group:
no orphan process stays behind. A stdio server's stderr goes to ``<log_dir>/<name>.log``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sys
import time
import warnings
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from board.tools.mcp.settings import ServerSpec
from board.tools.mcp.state import ServerState, ServerStatus

if TYPE_CHECKING:  # the SDK's types load with the first server
    import mcp_types

__all__ = ["BACKOFF_MAX_S", "BACKOFF_START_S", "ServerGone", "ServerLink", "reads_only"]

log = logging.getLogger("sabha.mcp")

BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 60.0
_STABLE_S = 60.0  # up this long: the next failure starts the backoff again at 1 s
_PING_EVERY_S = 5.0
_PING_TIMEOUT_S = 10.0
_MAX_PAGES = 100


class _NoQuerySecrets(logging.Filter):
    """On the ``httpx`` and ``httpx2`` loggers: a request line ("HTTP Request: POST http://...?api_key=...")
    shows no URL's ``user:password@`` nor its query values (a server's URL may carry its key)."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = re.sub(r"([?&][^=&#\s\"]+=)[^&#\s\"]*", r"\1***", re.sub(r"(?<=//)[^/@\s]*@", "", text))
        if clean != text:
            record.msg, record.args = clean, ()
        return True


_HTTPX_FILTER = _NoQuerySecrets()


class ServerGone(Exception):
    """The server is not connected (not started, restarting, failed, stopped), or died during the call
    (``during``: the call was sent, so it may have taken effect)."""

    def __init__(self, text: str, *, during: bool = False) -> None:
        super().__init__(text)
        self.during = during


def _one_line(exc: BaseException) -> str:
    """What went wrong in one line: the first real error inside the SDK's task groups (an HTTP 401, a refused
    connection), not "unhandled errors in a TaskGroup"."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


class ServerLink:
    """One MCP server: connected by a supervisor task, restarted when it dies, its tools kept current."""

    def __init__(self, spec: ServerSpec, *, log_dir: Path | None = None) -> None:
        self.spec = spec
        self.state = ServerState.STOPPED
        self.last_error: str | None = None
        self.restarts = 0
        #: The server's tools as it last listed them.
        self.tools: tuple[mcp_types.Tool, ...] = ()
        self._log_dir = log_dir
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._settled = asyncio.Event()  # a first attempt finished (ready or not)
        self._broken = asyncio.Event()
        self._relist = asyncio.Event()
        self._http_status: int | None = None  # the last HTTP error status of a server reached at a URL

    # -- life ------------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether its supervisor runs."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start connecting it (in the background); nothing when it runs already."""
        if self.started:
            return
        self.state = ServerState.STARTING
        self._settled.clear()
        self._task = asyncio.create_task(self._supervise(), name=f"mcp server {self.spec.name}")

    async def stop(self) -> None:
        """Disconnect it and end its process; waits until it is gone."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.state = ServerState.STOPPED
        self._ready.clear()
        self._settled.set()

    async def wait_settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for its first attempt to end; whether it is ready."""
        if not self._settled.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(timeout, 0)):
                    await self._settled.wait()
        return self.state.usable

    def status(self) -> ServerStatus:
        """How it is now."""
        tools = tuple((t.name, reads_only(t)) for t in self.tools) if self.state.usable else ()
        return ServerStatus(self.spec.name, self.state, self.spec.transport, self.spec.where, tools,
                            self.last_error, self.restarts)

    # -- calls -----------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> mcp_types.CallToolResult:
        """Call ``tool``; TimeoutError past ``timeout`` (the call is abandoned, the server stays up);
        :class:`ServerGone` when it is not connected or dies during the call (it is restarted)."""
        client = self._client
        if client is None or not self.state.usable:
            raise ServerGone(f"the {self.spec.name} server is {self.state.value}"
                             + (f" ({self.last_error})" if self.last_error else ""))
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        try:
            async with asyncio.timeout(timeout + 1.0):  # the SDK's own timeout first; this one if it does not
                result: mcp_types.CallToolResult = await client.call_tool(tool, arguments,
                                                                          read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED and await self._closed(client):
                self._broken.set()
                raise ServerGone(f"the {self.spec.name} server stopped during the call; it is being restarted",
                                 during=True) from exc
            if exc.code == REQUEST_TIMEOUT:
                raise TimeoutError(str(exc)) from exc
            raise
        return result

    async def _closed(self, client: Any) -> bool:
        """Whether the connection really closed, not a server that merely answered an error with the code the
        SDK also uses for a closed connection (-32000): a ping is sent; a closed connection refuses it at once
        with that code, any answer (even "method not found", as newer sessions say to a ping) means it is up."""
        from mcp import MCPError
        from mcp.shared.exceptions import MCPDeprecationWarning
        from mcp_types import CONNECTION_CLOSED

        try:
            async with asyncio.timeout(_PING_TIMEOUT_S):
                with warnings.catch_warnings():  # "ping is removed as of 2026-07-28": its refusal is an answer
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.send_ping()
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                return False
        except TimeoutError:
            return False  # up, and busy: the call's own error is what the model reads
        except Exception as exc:  # noqa: BLE001 - the transport itself failed
            log.info("mcp server %s: a ping after a failed call failed too (%s)", self.spec.name, _one_line(exc))
        else:
            return False
        return True

    # -- the supervisor --------------------------------------------------------------------------

    async def _supervise(self) -> None:
        delay = BACKOFF_START_S
        while True:
            began = time.monotonic()
            was_ready = False
            try:
                was_ready = await self._session()
                why = "the connection closed"
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a server that cannot start or dies is tried again
                why = _one_line(exc)
                if self._http_status is not None:
                    why += f" (HTTP {self._http_status}" + (
                        ": check headers_env and its variable)" if self._http_status in (401, 403) else ")")
            finally:
                self._client = None
                self._ready.clear()
            self.last_error = why = self.spec.redact(why)
            self.restarts += 1
            if was_ready and time.monotonic() - began >= _STABLE_S:
                delay = BACKOFF_START_S
            self.state = ServerState.RESTARTING if was_ready else ServerState.FAILED
            self._settled.set()
            log.warning("mcp server %s %s: %s; trying again in %g s", self.spec.name,
                        "stopped" if was_ready else "could not start", why, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX_S)
            self.state = ServerState.STARTING

    async def _session(self) -> bool:
        """Connect, list the tools, watch until the connection dies; whether it got ready."""
        from mcp import Client
        from mcp_types import Implementation

        async with AsyncExitStack() as stack:
            transport = await self._transport(stack)
            client = Client(transport, cache=None, message_handler=self._on_message,
                            client_info=Implementation(name="sabha", version="1"))
            self._broken.clear()
            async with asyncio.timeout(self.spec.start_timeout_s):
                await stack.enter_async_context(client)
                await self._list(client)
            self._client = client
            self.state, self.last_error = ServerState.READY, None
            self._ready.set()
            self._settled.set()
            log.info("mcp server %s ready: %d tool(s) (%s)", self.spec.name, len(self.tools), self.spec.transport)
            listener = asyncio.create_task(self._listen(client), name=f"mcp {self.spec.name} tool changes")
            try:
                await self._watch(client)
            finally:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await listener
            return True
        return False  # pragma: no cover - the block returns or raises

    async def _transport(self, stack: AsyncExitStack) -> Any:
        spec = self.spec
        if spec.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            for name in ("httpx", "httpx2"):  # the SDK's HTTP client logs every request's URL at INFO
                httpx_log = logging.getLogger(name)
                if _HTTPX_FILTER not in httpx_log.filters:
                    httpx_log.addFilter(_HTTPX_FILTER)
            http = create_mcp_http_client(headers=spec.headers() or None)
            stack.push_async_callback(http.aclose)
            self._http_status = None

            async def note_status(response: Any) -> None:  # the SDK keeps only "an error response"
                if response.status_code >= 400:
                    self._http_status = response.status_code

            http.event_hooks = {"response": [note_status]}
            return streamable_http_client(spec.url, http_client=http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=spec.command or "", args=list(spec.args), env=spec.environment(),
                                       cwd=spec.cwd)
        return stdio_client(params, errlog=self._errlog(stack))

    def _errlog(self, stack: AsyncExitStack) -> TextIO:
        if self._log_dir is None:
            return sys.stderr
        try:
            self._log_dir.mkdir(parents=True, exist_ok=True)
            errlog = (self._log_dir / f"{self.spec.name}.log").open("a", encoding="utf-8")
        except OSError as exc:
            log.warning("mcp server %s: cannot write its log in %s (%s); its stderr goes to Sabha's",
                        self.spec.name, self._log_dir, exc)
            return sys.stderr
        stack.callback(errlog.close)
        return errlog

    async def _list(self, client: Any) -> None:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        self.tools = tuple(tools)

    async def _listen(self, client: Any) -> None:
        """On a 2026-07-28 session: ask to hear when the server's tools change (``subscriptions/listen``); an
        older session gets ``notifications/tools/list_changed`` unasked (:meth:`_on_message`)."""
        caps = getattr(client.server_capabilities, "tools", None)
        if caps is None or not getattr(caps, "list_changed", False):
            return
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._relist.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - an older session or a server that does not offer it
            log.debug("mcp server %s: not listening for tool changes: %s", self.spec.name, _one_line(exc))

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist.set()

    async def _watch(self, client: Any) -> None:
        """Until the server dies: re-list its tools when it says they changed, ping it now and then."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        missed = 0
        while not self._broken.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_PING_EVERY_S):
                    await _first(self._broken, self._relist)
            if self._broken.is_set():
                return
            try:
                async with asyncio.timeout(_PING_TIMEOUT_S):
                    if self._relist.is_set():
                        self._relist.clear()
                        await self._list(client)
                        log.info("mcp server %s: its tools changed (%d now)", self.spec.name, len(self.tools))
                    else:
                        await client.send_ping()
                missed = 0
            except TimeoutError:
                missed += 1
                if missed >= 3:
                    raise RuntimeError(f"no answer to {missed} pings in a row") from None
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    return


async def _first(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


def reads_only(tool: mcp_types.Tool) -> bool:
    """Whether ``tool`` only reads: the server says ``readOnlyHint`` and not ``destructiveHint``."""
    notes = tool.annotations
    return notes is not None and notes.read_only_hint is True and notes.destructive_hint is not True
