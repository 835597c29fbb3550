"""Listening on a configured port: one place for what the daemon, its start-up stand-in
(:mod:`bot.ops.startwait`) and the front desk (:mod:`bot.channels.held.desk`) each did alike."""

from __future__ import annotations

from aiohttp import web

__all__ = ["bind_site"]


async def bind_site(runner: web.AppRunner, host: str, port: int, key: str, *, who: str = "") -> int:
    """Start ``runner``'s site on ``host``:``port``; the port it took (``port`` 0 picks one). A port that cannot
    be taken raises :class:`OSError` naming the setting to change (``server.<key>``), prefixed with ``who``
    ("front desk"). The runner is left as it was (the caller cleans it up)."""
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        raise OSError(f"{who + ': ' if who else ''}cannot listen on {host}:{port} ({exc.strerror}); change "
                      f"server.{key} in the config or stop the other process") from exc
    sockets = getattr(site._server, "sockets", None)  # aiohttp has no public accessor
    return int(sockets[0].getsockname()[1]) if sockets else port
