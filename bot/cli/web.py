"""``sabha web link``: a one-time login link to the owner's web pages; ``sabha web logout --all``:
sign every browser out.

The link is ``<base>/ui/login?token=...``: ``web.base_url`` when set (behind a reverse proxy),
else the running daemon's address from ``<data_dir>/daemon.json``, else ``server.host`` and
``server.port``. Only the token's hash goes into the state db (:mod:`bot.web.auth`), so this
works while the daemon runs: the daemon redeems the row when the link is followed. The link
works once, for ``web.link_ttl_s`` seconds (``--ttl`` for this one).

``sabha web logout --all`` revokes every session in the state db's ``web_sessions`` (a lost
phone, a shared computer): the running daemon refuses their cookies at the next request.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.cli.common import UserError, emit, note
from bot.cli.where import open_config

__all__ = ["add_parsers", "cmd_logout", "cmd_web"]


async def cmd_web(args: argparse.Namespace) -> int:
    """``sabha web link``."""
    from board.clock import SystemClock
    from bot.app import open_state_db
    from bot.ops.runtime import read_runtime
    from bot.web.app import server_url
    from bot.web.auth import create_link

    loaded = open_config(args, writes=True)
    web = loaded.config.web
    if not web.enabled:
        raise UserError("the web pages are off (web.enabled: false in the config); turn them on and restart "
                        "`sabha run`")
    ttl = float(args.ttl) if args.ttl is not None else web.link_ttl_s
    if not 10 <= ttl <= 86400:
        raise UserError("--ttl must be between 10 and 86400 seconds")
    running = read_runtime(loaded.data_dir)
    alive = running is not None and running.alive()
    if not alive and not web.base_url and loaded.config.server.port == 0:
        raise UserError("no daemon runs on this data dir, and server.port is 0 (a free port is picked at start), so "
                        "there is no address to link to yet: start `sabha run`, then run `sabha web link` again")
    base = server_url(loaded, running.port if running is not None and alive else None)
    async with await open_state_db(loaded) as db:
        link = await create_link(db, SystemClock(), ttl, base)
    if args.json:
        emit(json.dumps({"link": link, "expires_in_s": ttl, "daemon_running": alive}))
        return 0
    emit(link)
    minutes = f"{ttl / 60:g} minutes" if ttl >= 60 else f"{ttl:g} seconds"
    note(f"open it in your browser within {minutes}; it works once"
         + ("" if alive else ". No daemon runs on this data dir yet: start `sabha run` first"))
    return 0


async def cmd_logout(args: argparse.Namespace) -> int:
    """``sabha web logout --all``."""
    from board.clock import SystemClock
    from bot.app import open_state_db
    from bot.web.auth import WebSessions

    if not args.all:
        raise UserError("say --all: `sabha web logout --all` signs every browser out (to sign out one browser, "
                        "press Sign out on its page)")
    loaded = open_config(args, writes=True)
    async with await open_state_db(loaded) as db:
        ended = await WebSessions(db, SystemClock()).revoke_all()
    if args.json:
        emit(json.dumps({"signed_out": ended}))
        return 0
    emit(f"signed out {ended} session(s)" if ended else "no browser was signed in")
    note("run `sabha web link` to sign in again")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha web``."""
    p = sub.add_parser("web", parents=[common], help="the owner's web pages: a one-time login link",
                       description="The board on a web page, served by `sabha run` at /ui/. `sabha web link` prints "
                                   "a one-time login link; `sabha web logout --all` signs every browser out.")
    wsub = p.add_subparsers(dest="web_command", metavar="ACTION")
    lp = wsub.add_parser("link", parents=[common], help="print a one-time login link (works once, for minutes)")
    lp.add_argument("--ttl", type=float, default=None, metavar="SECONDS",
                    help="how long the link may be used (default: web.link_ttl_s, 600)")
    lp.add_argument("--json", action="store_true", help="machine-readable output")
    op = wsub.add_parser("logout", parents=[common], help="sign every browser out of the web pages (--all)")
    op.add_argument("--all", action="store_true", help="every signed-in browser (required)")
    op.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_need_action, json=False, ttl=None)
    lp.set_defaults(handler=cmd_web)
    op.set_defaults(handler=cmd_logout, all=False)


async def _need_action(args: argparse.Namespace) -> int:
    raise UserError("say what: `sabha web link` prints a one-time login link; `sabha web logout --all` signs "
                    "every browser out")
