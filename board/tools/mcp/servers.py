"""The servers of ``mcp.servers`` and the outside tools they give the board: :class:`McpServers`.

The daemon starts every enabled server with it (:meth:`McpServers.start`); the terminal (``sabha chat``,
``sabha ask``) starts a role's servers the first time that role answers (:meth:`McpServers.ensure`). A reload
(SIGHUP) adds, removes and restarts servers without a restart of Sabha (:meth:`McpServers.reconfigure`);
:meth:`McpServers.close` stops them all with Sabha.

As the exchange's :class:`board.agent.outside.OutsideTools`, :meth:`McpServers.tools_for` gives a context the
tools of the servers its role was given (``mcp:<server>`` or ``mcp:<server>.<tool>`` in its tools), as they are
listed now, named ``<server>__<tool>``: none for a stranger. A call is bounded (``call_timeout_s`` and the
turn's deadline), counted (``mcp.max_calls_per_turn`` per exchange), and one that does not only read passes the
:class:`ConsentGate` first; its result is quoted as data (:mod:`board.tools.mcp.results`). The ledger records
every call with its server (the exchange's tool report).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.agent.outside import NO_CONSENT, ConsentAsk, ConsentGate, ConsentVerdict
from board.agent.tools import Tool, ToolContext, ToolOrigin, ToolResult, validator_for
from board.llm.base import ToolSpec
from board.spending.allowance import current_allowance
from board.tools.mcp.grants import McpGrant, grants_in
from board.tools.mcp.link import ServerGone, ServerLink, reads_only
from board.tools.mcp.results import (
    SchemaRefused,
    api_name,
    as_result,
    described,
    quoted_error,
    quoted_schema,
    tool_name_problem,
)
from board.tools.mcp.settings import McpSettings, ServerSpec
from board.tools.mcp.state import ServerStatus
from board.workspace.quoting import plain_line, quote_field

if TYPE_CHECKING:  # the SDK's types load with the first server
    import mcp_types

__all__ = ["McpServers", "call_key"]

log = logging.getLogger("sabha.mcp")

#: What a role's tools say, by role (its soul front matter ``tools:`` or ``board.agents.<role>.tools``).
Grants = Callable[[str], Iterable[str] | None]


def call_key(ctx: ToolContext, origin: ToolOrigin, arguments: Mapping[str, Any], exchange: str) -> str:
    """What names one call across a restart: the message being answered (channel and message id), the tool, and
    the sha256 of its arguments as canonical JSON. A message with no id (the terminal, an MCP client) is named by
    its session and ``exchange`` (unique to this answer), so the same call in a later answer is asked anew; a
    channel's message keeps its id, so the answer retried after a kill -9 finds its approval."""
    envelope = ctx.envelope
    where = f"{envelope.channel}:{envelope.message_id}" if envelope is not None and envelope.message_id \
        else f"{ctx.session_key}#{exchange}"
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return f"{where}|{origin.label}|{hashlib.sha256(canonical.encode()).hexdigest()}"


def is_stranger(ctx: ToolContext) -> bool:
    """Whether ``ctx`` answers a stranger (a public-mode sender, or a message held to a stranger's allowance)."""
    return current_allowance.get() is not None or (ctx.envelope is not None and ctx.envelope.is_public)


#: The share of a turn's time left that a call may take: the rest is for the model to answer without it.
_CALL_SHARE = 0.75
_ANSWER_RESERVE_MAX_S = 20.0


def _time_for(call_timeout_s: float, ctx: ToolContext) -> float:
    """How long a call may take now: its own timeout, and never so much of the turn that no time is left for
    the answer (a quarter of what is left, at most 20 s, stays for it)."""
    if ctx.deadline is None:
        return call_timeout_s
    left = ctx.deadline - asyncio.get_running_loop().time()
    return min(call_timeout_s, left - min(left * (1 - _CALL_SHARE), _ANSWER_RESERVE_MAX_S))


def _secs(seconds: float) -> str:
    """Seconds as a person reads them: 30, 1.5, 0.75."""
    return f"{seconds:.0f}" if seconds >= 10 else f"{seconds:.2g}"


@dataclass
class _Turn:
    """The outside-tool calls of one exchange so far, and what names the exchange (:func:`call_key`)."""

    calls: int = 0
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class _Offer:
    """A server's tool as offered: where it comes from and the spec the model sees."""

    origin: ToolOrigin
    spec: ToolSpec


@dataclass
class _Known:
    """The unknown ``mcp:`` names already logged (once each)."""

    names: set[tuple[str, str]] = field(default_factory=set)


class McpServers:
    """Every configured MCP server; the board's source of outside tools (see the module docstring)."""

    def __init__(self, settings: McpSettings, *, grants: Grants, consent: ConsentGate = NO_CONSENT,
                 log_dir: Path | None = None) -> None:
        self.settings = settings
        self._grants = grants
        self._consent = consent
        self._log_dir = log_dir
        self._links: dict[str, ServerLink] = {s.name: ServerLink(s, log_dir=log_dir) for s in settings.servers}
        self._offers: dict[str, tuple[tuple[mcp_types.Tool, ...], tuple[_Offer, ...]]] = {}
        self._refused: dict[str, tuple[tuple[str, str], ...]] = {}
        self._unknown = _Known()
        self._started = False
        self._stopping: set[asyncio.Task[None]] = set()

    # -- life ------------------------------------------------------------------------------------

    def start(self, names: Iterable[str] | None = None) -> None:
        """Start every enabled server (or those of ``names``) in the background (the daemon, at its start)."""
        wanted = None if names is None else set(names)
        self._started = wanted is None
        for link in self._links.values():
            if link.spec.enabled and (wanted is None or link.spec.name in wanted):
                link.start()

    async def settled(self) -> None:
        """Wait until every started server has connected or failed once (each up to its ``start_timeout_s``)."""
        links = [link for link in self._links.values() if link.started]
        await asyncio.gather(*(link.wait_settled(link.spec.start_timeout_s + 1.0) for link in links))

    def listed(self, server: str) -> tuple[mcp_types.Tool, ...]:
        """The tools ``server`` listed when it last connected and that are offered (their full descriptions and
        schemas); a tool refused for its name or schema is not among them (:meth:`refused`)."""
        link = self._links.get(server)
        if link is None or not link.state.usable:
            return ()
        offered = {o.origin.tool for o in self._offered(link)}
        return tuple(t for t in link.tools if t.name in offered)

    def refused(self, server: str) -> tuple[tuple[str, str], ...]:
        """The tools ``server`` lists that are not offered: (the name, quoted; why)."""
        link = self._links.get(server)
        if link is None or not link.state.usable:
            return ()
        self._offered(link)
        return self._refused.get(server, ())

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call ``tool`` of ``server`` as the owner would from the terminal (``sabha tools test``): a tool that
        does not only read still passes the consent gate; the result is quoted as the model would see it."""
        ctx = ToolContext(role="owner", session_key=f"cli:tools:{server}")
        link = self._links.get(server)
        found = next((t for t in self.listed(server) if t.name == tool), None)
        if link is None or found is None:
            return ToolResult.failure(f"{server} has no tool {tool!r}")
        return await self._call(ToolOrigin(server, tool, reads_only(found)), arguments, ctx, _Turn())

    async def ensure(self, ctx: ToolContext) -> None:
        """Start the servers ``ctx``'s role was given that have not started (the terminal: on first use) and wait
        for the ones still starting, up to their ``start_timeout_s`` and the turn's deadline."""
        if is_stranger(ctx):
            return
        links = [self._links[n] for n in self._granted(ctx.role) if n in self._links]
        links = [link for link in links if link.spec.enabled]
        if not links:
            return
        for link in links:
            link.start()
        loop = asyncio.get_running_loop()
        left = (ctx.deadline - loop.time()) if ctx.deadline is not None else None
        await asyncio.gather(*(link.wait_settled(min(link.spec.start_timeout_s, left) if left is not None
                                                 else link.spec.start_timeout_s) for link in links))

    async def close(self) -> None:
        """Stop every server (their processes end before this returns)."""
        self._started = False
        await asyncio.gather(*(link.stop() for link in self._links.values()), *self._stopping,
                             return_exceptions=True)

    def reconfigure(self, settings: McpSettings) -> list[str]:
        """Apply a reload's servers: removed ones stop, new ones start (if the servers run), changed ones restart;
        the limits change at once. Returns what was done, one line each."""
        done: list[str] = []
        old = {s.name: s for s in self.settings.servers}
        new = {s.name: s for s in settings.servers}
        for name in old.keys() - new.keys():
            self._retire(self._links.pop(name))
            done.append(f"mcp server {name} removed")
        for name, spec in new.items():
            if old.get(name) == spec:
                continue
            if name in self._links:
                self._retire(self._links.pop(name))
            link = self._links[name] = ServerLink(spec, log_dir=self._log_dir)
            if self._started and spec.enabled:
                link.start()
            done.append(f"mcp server {name} {'changed' if name in old else 'added'}")
        self.settings = settings
        self._offers.clear()
        return done

    def _retire(self, link: ServerLink) -> None:
        task = asyncio.get_running_loop().create_task(link.stop(), name=f"mcp stop {link.spec.name}")
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def states(self) -> tuple[ServerStatus, ...]:
        """Every configured server now, by name: only its tools that are offered, the others as refused."""
        return tuple(self._status(self._links[n]) for n in sorted(self._links))

    def _status(self, link: ServerLink) -> ServerStatus:
        status = link.status()
        if not link.state.usable:
            return status
        offered = {o.origin.tool for o in self._offered(link)}
        return replace(status, tools=tuple(t for t in status.tools if t[0] in offered),
                       refused=self._refused.get(link.spec.name, ()))

    def roles_of(self, server: str, roles: Iterable[str]) -> tuple[str, ...]:
        """Which of ``roles`` were given ``server``."""
        return tuple(r for r in roles if server in self._granted(r, log_unknown=False))

    # -- the tools -------------------------------------------------------------------------------

    def _granted(self, role: str, *, log_unknown: bool = True) -> dict[str, McpGrant]:
        try:
            grants = grants_in(self._grants(role))
        except Exception:  # a role without a soul: no servers
            log.debug("mcp: no tools list for role %s", role, exc_info=True)
            return {}
        for name in [n for n in grants if self.settings.spec(n) is None]:
            del grants[name]
            if log_unknown and (role, name) not in self._unknown.names:
                self._unknown.names.add((role, name))
                log.warning("role %s names mcp:%s, which is not a server of mcp.servers; ignored (declare it "
                            "under mcp.servers in sabha.yaml, or remove it from the role's tools)", role, name)
        return grants

    def tools_for(self, ctx: ToolContext) -> tuple[Tool, ...]:
        """The tools of the servers ``ctx``'s role was given that are ready now; () for a stranger."""
        if is_stranger(ctx):
            return ()
        turn = _Turn()
        tools: list[Tool] = []
        for name, grant in sorted(self._granted(ctx.role).items()):
            link = self._links.get(name)
            if link is None or not link.spec.enabled or not link.state.usable:
                continue
            for offer in self._offered(link):
                if grant.allows(offer.origin.tool):
                    tools.append(self._tool(offer, link.spec, turn))
        return tuple(tools)

    def _offered(self, link: ServerLink) -> tuple[_Offer, ...]:
        """The server's tools as offered, made again only when it lists them anew."""
        listed = link.tools
        cached = self._offers.get(link.spec.name)
        if cached is not None and cached[0] is listed:
            return cached[1]
        made = [(t, self._offer(link.spec, t)) for t in listed]
        offers = tuple(o for _, o in made if isinstance(o, _Offer))
        refused = tuple((quote_field(t.name, 80), o) for t, o in made if isinstance(o, str))
        for name, why in refused:  # once per listing
            log.warning("mcp server %s: tool %s is not offered: %s", link.spec.name, name, why)
        self._offers[link.spec.name] = (listed, offers)
        self._refused[link.spec.name] = refused
        return offers

    def _offer(self, spec: ServerSpec, tool: mcp_types.Tool) -> _Offer | str:
        """The tool as offered, or why it is not: a name or a schema that cannot be shown to the model safely."""
        problem = tool_name_problem(tool.name)
        if problem is not None:
            return problem
        origin = ToolOrigin(spec.name, tool.name, reads_only(tool))
        try:
            schema = quoted_schema(tool.input_schema or {"type": "object"})
        except SchemaRefused as exc:
            return str(exc)
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            schema = {"type": "object", "properties": {}, "additionalProperties": True}
        try:
            validator_for(schema)
        except Exception as exc:  # noqa: BLE001 - a schema we cannot check is a tool we cannot offer
            return f"its schema cannot be checked ({plain_line(str(exc).splitlines()[0], 200)})"
        return _Offer(origin, ToolSpec(api_name(spec.name, tool.name), described(origin, tool.description), schema))

    def _tool(self, offer: _Offer, spec: ServerSpec, turn: _Turn) -> Tool:
        async def handler(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return await self._call(offer.origin, arguments, ctx, turn)

        return Tool(offer.spec, handler, timeout_s=spec.call_timeout_s + 5.0, origin=offer.origin)

    # -- a call ----------------------------------------------------------------------------------

    async def _call(self, origin: ToolOrigin, arguments: dict[str, Any], ctx: ToolContext, turn: _Turn) -> ToolResult:
        cap = self.settings.max_calls_per_turn
        if turn.calls >= cap:
            return ToolResult.failure(f"not run: this answer already made {cap} outside tool calls, the most one "
                                      "answer may make (mcp.max_calls_per_turn); answer with what you have")
        link = self._links.get(origin.server)
        if link is None or not link.state.usable:
            state = link.status() if link is not None else None
            why = f"{state.state.value}" + (f"; {quoted_error(origin.server, state.last_error)}"
                                             if state and state.last_error else "") \
                if state else "no longer configured"
            return ToolResult.failure(f"{origin.label} is not available now ({why}); answer without it")
        timeout = _time_for(link.spec.call_timeout_s, ctx)
        if timeout <= 0:
            return ToolResult.failure(f"not run: no time is left in this answer for {origin.label}; answer without it")
        turn.calls += 1
        verdict: ConsentVerdict | None = None
        if not origin.read_only:
            key = call_key(ctx, origin, arguments, turn.id)
            verdict = await self._consent.ask(ConsentAsk(origin, dict(arguments), key, ctx.role, ctx.session_key,
                                                         ctx.meeting_id), ctx)
            if not verdict.runs:
                return ToolResult.failure(verdict.note or f"{origin.label} was not run: the owner did not allow it")
            timeout = _time_for(link.spec.call_timeout_s, ctx)  # the wait for the owner took some of the turn
        return await self._run(link, origin, arguments, max(timeout, 0.1), verdict)

    async def _run(self, link: ServerLink, origin: ToolOrigin, arguments: dict[str, Any], timeout: float,
                   verdict: ConsentVerdict | None) -> ToolResult:
        """Make the call. A call whose outcome is unknown (no answer in time, the server died during it, the
        turn was cancelled) is not recorded as finished: the consent row stays "may have run", never repeated."""
        ok, summary, known = False, "", True
        may = "" if origin.read_only else " It may have taken effect: do not say it did not."
        try:
            result = await link.call(origin.tool, arguments, timeout)
            ok = not result.is_error
            summary = "answered" if ok else "answered with an error"
            return as_result(origin, result, self.settings.result_max_chars)
        except TimeoutError:
            known = False
            log.warning("mcp %s: no answer within %s s; abandoned", origin.label, _secs(timeout))
            return ToolResult.failure(f"{origin.label} gave no answer within {_secs(timeout)} s and was abandoned;"
                                      f"{may} Answer without its result.", retryable=False)
        except ServerGone as exc:
            known = not exc.during
            return ToolResult.failure(f"{origin.label} failed: {exc}.{may if exc.during else ''} Answer without it.")
        except asyncio.CancelledError:
            known = False
            raise
        except Exception as exc:  # noqa: BLE001 - the server's failure is the model's to read, as its words
            said = " ".join(str(exc).split()) or type(exc).__name__
            summary = f"failed: {plain_line(said, 300)}"
            log.warning("mcp %s failed: %s", origin.label, plain_line(said, 300))
            return ToolResult.failure(f"{origin.label} failed; {quoted_error(origin.server, said)}. "
                                      "Answer without it.")
        finally:
            if verdict is not None and known:
                try:
                    await self._consent.finished(verdict, ok=ok, summary=summary)
                except Exception:  # bookkeeping must not break the turn
                    log.exception("recording the end of %s failed", origin.label)
            elif verdict is not None:
                log.warning("consent #%s: %s was started and its outcome is unknown: it may have run",
                            verdict.ticket, origin.label)
