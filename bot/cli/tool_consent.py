"""The consent actions of ``sabha tools`` (the group and its ``list`` and ``test`` are :mod:`bot.cli.tools`'s,
which adds these with :func:`add_actions`): what the owner allows advisors to run from MCP servers.

- ``sabha tools approvals``: the tools the owner always allows, the calls waiting for an answer and the latest
  ones asked for (who asked, what came of it);
- ``sabha tools allow <server.tool>``: always allow a tool (it runs without asking from now on);
- ``sabha tools deny <server.tool>``: ask again for a tool that was always allowed; ``sabha tools deny <n>``
  refuses call #n that is waiting (its advisor answers without it), ``sabha tools allow <n>`` allows it once.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit
from bot.cli.where import board_command

if TYPE_CHECKING:
    from board.app import Parts
    from board.tools.consent import ApprovalRow

__all__ = ["add_actions", "cmd_consent"]

NOTHING_YET = "no tool call has asked for consent yet and no tool is always allowed"
_LABEL = re.compile(r"^(?P<server>[A-Za-z0-9_-]+)\.(?P<tool>[^\s.][^\s]*)$")


def add_actions(tsub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``approvals``, ``allow`` and ``deny`` to the ``sabha tools`` group's subparsers ``tsub``."""
    ap = tsub.add_parser("approvals", parents=[common], help="tools always allowed, calls waiting, the latest asks")
    ap.add_argument("--limit", type=int, default=20, help="how many of the latest asks to list (default 20)")
    ap.set_defaults(handler=board_command(cmd_consent, writes=False, empty=NOTHING_YET))
    al = tsub.add_parser("allow", parents=[common], help="always allow SERVER.TOOL, or allow waiting call N once",
                         description="SERVER.TOOL (as `sabha tools approvals` and the question name it): it runs "
                                     "without asking from now on. N: the waiting call #N runs once.")
    al.add_argument("target", metavar="SERVER.TOOL|N")
    al.set_defaults(handler=board_command(cmd_consent, writes=True))
    dn = tsub.add_parser("deny", parents=[common], help="ask again for SERVER.TOOL, or refuse waiting call N",
                         description="SERVER.TOOL: no longer always allowed (the owner is asked each time). N: the "
                                     "waiting call #N is refused; its advisor answers without it.")
    dn.add_argument("target", metavar="SERVER.TOOL|N")
    dn.set_defaults(handler=board_command(cmd_consent, writes=True))


def _label(target: str) -> tuple[str, str]:
    found = _LABEL.match(target.strip())
    if found is None:
        raise UserError(f"{target!r}: name a tool as SERVER.TOOL (e.g. filesystem.write_file), or a waiting call "
                        "by its number (see `sabha tools approvals`)")
    return found["server"], found["tool"]


def _line(row: ApprovalRow) -> str:
    what = row.answer or "waiting"
    if row.finished_at is not None:
        what += ", ran " + ("ok" if row.ok else "with an error")
    elif row.started_at is not None:
        what += ", started (may have run)"
    where = f" in {row.place}" if row.place is not None else ""
    return f"  #{row.id} {row.asked_at[:19].replace('T', ' ')} {row.label} for {row.role}{where}: {what}"


async def _approvals(parts: Parts, limit: int) -> int:
    store = parts.consent.store
    always = await store.always()
    emit("always allowed: " + (", ".join(a.label for a in always) if always else "none"))
    waiting = await store.waiting()
    if waiting:
        emit(f"waiting for your answer ({len(waiting)}; `sabha tools allow N` or `sabha tools deny N`):")
        for row in waiting:
            emit(_line(row))
    recent = [r for r in await store.recent(max(limit, 1)) if r.answer is not None]
    emit("latest asks:" if recent else "no call has been answered yet")
    for row in recent:
        emit(_line(row))
    return 0


async def cmd_consent(parts: Parts, args: argparse.Namespace) -> int:
    """``tools approvals`` | ``tools allow X`` | ``tools deny X``."""
    from board.tools.consent import Answer

    if args.tools_command == "approvals":
        return await _approvals(parts, args.limit)
    target = str(args.target).strip().lstrip("#")
    allow = args.tools_command == "allow"
    if target.isdigit():
        decided = await parts.consent.decide(int(target), Answer.ALLOWED_ONCE if allow else Answer.DENIED,
                                             by="cli")
        (emit if decided.changed else lambda text: sys.stderr.write(f"sabha: {text}\n"))(decided.text)
        return 0 if decided.changed else 2
    server, tool = _label(target)
    store, now = parts.consent.store, parts.clock.now()
    if allow:
        added = await store.allow_always(server, tool, "cli", now)
        emit(f"{server}.{tool} is always allowed{'' if added else ' already'}: advisors run it without asking "
             f"(`sabha tools deny {server}.{tool}` asks again).")
        return 0
    removed = await store.revoke(server, tool)
    emit(f"{server}.{tool} " + ("is no longer always allowed: the owner is asked before each call." if removed
                                else "was not always allowed; nothing changed (the owner is asked each time)."))
    return 0
