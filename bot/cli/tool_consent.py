"""The consent actions of ``sabha tools`` (the group and its ``list`` and ``test`` are :mod:`bot.cli.tools`'s,
which adds these with :func:`add_actions`): what the owner allows advisors to run from MCP servers.

- ``sabha tools approvals``: the tools the owner always allows, the calls waiting for an answer and the latest
  ones asked for (who asked, what came of it);
- ``sabha tools allow <server.tool>``: always allow a tool (it runs without asking from now on). The server must
  be declared in ``mcp.servers`` (a typo is not recorded as consent, nor a name that would pre-authorise a
  server added later); it is started, as ``tools test`` does, to check it has the tool. One that cannot start,
  or does not list the tool (yet), is refused unless ``--force``;
- ``sabha tools deny <server.tool>``: ask again for a tool that was always allowed; ``sabha tools deny <n>``
  refuses call #n that is waiting (its advisor answers without it), ``sabha tools allow <n>`` allows it once.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit, note
from bot.cli.suggest import closest
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
                                     "without asking from now on; the server must be in mcp.servers, and is "
                                     "started to check it has the tool. N: the waiting call #N runs once.")
    al.add_argument("target", metavar="SERVER.TOOL|N")
    al.add_argument("--force", action="store_true",
                    help="allow SERVER.TOOL even when the server cannot be started to check it has that tool "
                         "(the server must still be in mcp.servers)")
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


async def _checked(parts: Parts, server: str, tool: str, *, force: bool) -> None:
    """Refuse (:class:`UserError`) to always allow ``server.tool`` unless the server is declared and, started,
    lists the tool; ``force``: a server that cannot start (or lacks the tool now) is allowed, said so."""
    declared = [s.name for s in parts.mcp.settings.servers]
    spec = parts.mcp.settings.spec(server)
    if spec is None:
        guess = closest(server, declared)
        raise UserError(f"no MCP server {server!r} in mcp.servers" + (f": did you mean {guess}.{tool}?" if guess
                                                                         else "")
                        + f" (declared: {', '.join(declared) or 'none'}); declare a server there before allowing "
                          "its tools (docs/tools.md)")
    unchecked = f"; allow it unchecked with `sabha tools allow --force {server}.{tool}`"
    if not spec.enabled:
        problem = (f"{server} is disabled (mcp.servers.{server}.enabled: false), so it was not started to check "
                   f"that it has a tool {tool!r}")
    else:
        note(f"starting {server} to check it has a tool {tool!r} ...")
        parts.mcp.start([server])
        await parts.mcp.settled()
        status = next(s for s in parts.mcp.states() if s.name == server)
        if status.state.usable:
            names = [t.name for t in parts.mcp.listed(server)]
            if tool in names:
                return
            guess = closest(tool, names)
            problem = (f"{server} has no tool {tool!r}" + (f": did you mean {server}.{guess}?" if guess else "")
                       + f" (its tools: {', '.join(names) or 'none'})")
            unchecked = f"; for a tool it adds later: `sabha tools allow --force {server}.{tool}`"
        else:
            problem = (f"{server} did not start ({status.state.value}: {status.last_error or 'no answer'}), so "
                       f"Sabha cannot check that it has a tool {tool!r} (`sabha tools test {server}` says more)")
    if not force:
        raise UserError(problem + unchecked)
    note(f"warning: {problem}; --force: allowed all the same")


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
    store = parts.consent.store
    if allow:
        await _checked(parts, server, tool, force=bool(getattr(args, "force", False)))
        added = await store.allow_always(server, tool, "cli", parts.clock.now())
        emit(f"{server}.{tool} is always allowed{'' if added else ' already'}: advisors run it without asking "
             f"(`sabha tools deny {server}.{tool}` asks again).")
        return 0
    removed = await store.revoke(server, tool)
    emit(f"{server}.{tool} " + ("is no longer always allowed: the owner is asked before each call." if removed
                                else "was not always allowed; nothing changed (the owner is asked each time)."))
    return 0
