"""What the tools cost: ``sabha cost --by tool``, from the ledger's ``tool_calls`` rows.

One :class:`ToolCostRow` per tool as it is cited: ``server.tool`` for an outside (MCP) tool (the row's
``server`` and the server's own tool name, the ``<server>__`` of its API name left off), and Sabha's own
tools by name (server ``sabha``). Each row counts calls and failures, the median and 95th-percentile
latency of its calls, and the bytes of their results (what went back into the prompt). :func:`tool_costs`
reads them (since a moment, for one role, for one meeting); :func:`format_tool_report` is the table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from board.storage import Database

__all__ = ["OWN_TOOLS", "ToolCostRow", "format_tool_report", "percentile", "tool_costs"]

#: The server column of Sabha's own tools in the report.
OWN_TOOLS = "sabha"


@dataclass(frozen=True)
class ToolCostRow:
    """One tool's calls over a period."""

    label: str  # server.tool, or the name of one of Sabha's own tools
    server: str  # the MCP server, or "sabha"
    calls: int
    failed: int
    median_ms: float | None
    p95_ms: float | None
    bytes: int
    roles: tuple[str, ...] = field(default_factory=tuple)  # who called it, most calls first


def percentile(values: Sequence[float], share: float) -> float | None:
    """The ``share`` (0..1) percentile of ``values``, nearest rank (None for none)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def _label(server: str | None, name: str) -> tuple[str, str]:
    if not server:
        return name, OWN_TOOLS
    return f"{server}.{name.removeprefix(server + '__')}", server


async def tool_costs(db: Database, *, since: datetime | None = None, role: str | None = None,
                     meeting: str | None = None) -> list[ToolCostRow]:
    """Every tool called since ``since`` (all time when None), by ``role`` / in ``meeting`` only when given;
    most calls first."""
    where, params = [], []
    if since is not None:
        where.append("ts >= ?")
        params.append(since.astimezone(UTC).isoformat(timespec="seconds"))
    if role is not None:
        where.append("role = ?")
        params.append(role)
    if meeting is not None:
        where.append("meeting_id = ?")
        params.append(meeting)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    rows = await db.fetchall(f"SELECT server, name, role, ok, latency_ms, result_bytes FROM tool_calls {clause}",
                             tuple(params))
    groups: dict[str, dict[str, Any]] = {}
    for r in rows:
        label, server = _label(r["server"], str(r["name"]))
        g = groups.setdefault(label, {"server": server, "calls": 0, "failed": 0, "ms": [], "bytes": 0, "roles": {}})
        g["calls"] += 1
        g["failed"] += 0 if int(r["ok"] or 0) else 1
        if r["latency_ms"] is not None:
            g["ms"].append(float(r["latency_ms"]))
        g["bytes"] += int(r["result_bytes"] or 0)
        who = str(r["role"] or "(none)")
        g["roles"][who] = g["roles"].get(who, 0) + 1
    out = [ToolCostRow(label=label, server=g["server"], calls=g["calls"], failed=g["failed"],
                       median_ms=percentile(g["ms"], 0.5), p95_ms=percentile(g["ms"], 0.95), bytes=g["bytes"],
                       roles=tuple(sorted(g["roles"], key=lambda k: (-g["roles"][k], k))))
           for label, g in groups.items()]
    return sorted(out, key=lambda r: (-r.calls, r.label))


def _bytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    return f"{n / 1024:.1f} KB" if n >= 1024 else f"{n} B"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def format_tool_report(rows: Sequence[ToolCostRow], *, since_label: str) -> str:
    """A plain-text table: tool, server, calls, failed, median and p95 latency (ms), result bytes, roles."""
    if not rows:
        return f"No tool calls recorded {since_label}."
    head = ("tool", "server", "calls", "failed", "median ms", "p95 ms", "result bytes", "roles")
    body = [(r.label, r.server, str(r.calls), str(r.failed), _ms(r.median_ms), _ms(r.p95_ms), _bytes(r.bytes),
             ", ".join(r.roles)) for r in rows]
    total = ("total", "", str(sum(r.calls for r in rows)), str(sum(r.failed for r in rows)), "", "",
             _bytes(sum(r.bytes for r in rows)), "")
    widths = [max(len(row[i]) for row in (head, *body, total)) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        left = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        right = [c.rjust(w) for c, w in zip(cells[2:7], widths[2:7], strict=True)]
        return "  ".join([*left, *right, cells[7]]).rstrip()

    out = [f"Tool calls {since_label}, by tool (outside tools as server.tool; {OWN_TOOLS}: Sabha's own):",
           line(head), *(line(cells) for cells in body), "-" * len(line(head)), line(total)]
    return "\n".join(out)
