"""Which servers (and tools) a role was given: the ``mcp:<server>`` and ``mcp:<server>.<tool>`` entries of its
soul front matter ``tools:`` or ``board.agents.<role>.tools``.

``mcp:`` entries do not restrict the role's own tools: a list holding only ``mcp:`` entries keeps the built-in
defaults (:meth:`board.agent.exchange.deps.ExchangePolicy.allowed_tools`). Nobody has a server until one is given.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PREFIX", "McpGrant", "grants_in"]

PREFIX = "mcp:"


@dataclass(frozen=True)
class McpGrant:
    """One server given to a role: all its tools (``tools`` is None) or only those named."""

    server: str
    tools: frozenset[str] | None = None

    def allows(self, tool: str) -> bool:
        """Whether the role may call the server's ``tool``."""
        return self.tools is None or tool in self.tools


def grants_in(entries: Iterable[str] | None) -> dict[str, McpGrant]:
    """The servers the ``mcp:`` entries of ``entries`` give, by server name (a whole server wins over
    single tools of it)."""
    whole: set[str] = set()
    some: dict[str, set[str]] = {}
    for entry in entries or ():
        if not entry.startswith(PREFIX):
            continue
        server, _, tool = entry[len(PREFIX):].strip().partition(".")
        if not server:
            continue
        if tool:
            some.setdefault(server, set()).add(tool)
        else:
            whole.add(server)
    grants = {name: McpGrant(name) for name in whole}
    for name, tools in some.items():
        grants.setdefault(name, McpGrant(name, frozenset(tools)))
    return grants
