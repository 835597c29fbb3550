"""``GET /ui/ops``: the operations page (owner only, like every page under ``/ui/``).

Drawn on the server from the state db (:mod:`bot.web.ops_figures` reads it, bounded and indexed): time to answer
per channel and per model over the last hour and day, model errors and fallbacks, the guardrail feed, prompt size
per tier with the cache-read share, the queue per channel and this process's turns in flight now (the intake's
lanes), the replicas with their leases and spare turns, and the scheduled work that waits.
``docs/operations.md`` says what each figure means.
"""

from __future__ import annotations

from datetime import UTC

from aiohttp import web

from bot.web.context import context_of
from bot.web.ops_figures import SAMPLE, read_figures
from bot.web.pages import page

__all__ = ["ops_page", "routes"]


def millis(value: float | None) -> str:
    """``820 ms`` / ``4.2 s``, or an en dash when there is no figure."""
    if value is None:
        return "\N{EN DASH}"
    return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.1f} s"


async def ops_page(request: web.Request) -> web.Response:
    """The page."""
    ctx = context_of(request)
    now = ctx.clock.now().astimezone(UTC)
    figures = await read_figures(ctx.db, now, lease_s=ctx.lease_s)
    load = ctx.intake_load() if ctx.intake_load is not None else None
    return page(request, "ops.html", active="ops", title="Operations", f=figures, ms=millis, sample=SAMPLE,
                now=now.strftime("%Y-%m-%d %H:%M UTC"), load=load)


def routes() -> list[web.RouteDef]:
    """The page's routes (relative to ``/ui``)."""
    return [web.get("/ops", ops_page)]
