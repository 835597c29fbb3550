"""``sabha ask``: one question, one answer; and what the terminal chat shares with it.

:func:`resolve_role` turns ``--role`` into a role the way ``@name`` does in chat (slug or
display name, any case), and tells an unknown role from a role whose soul cannot be used.
A question whose model (and every fallback) has no API key stops at once with the fix
(:mod:`bot.cli.keys`) instead of answering degraded. ``--file PATH`` (repeatable) sends
files with the question, read by the board as a channel's files are (:mod:`bot.cli.attach`);
a path that cannot be sent stops the command before anything is asked.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, note
from bot.cli.keys import key_advice, keyless_models
from bot.cli.where import open_config, with_board

if TYPE_CHECKING:
    from board.app import Board, Parts
    from board.envelope import Envelope
    from board.media.attachment import Attachment
    from board.routing.router import Router
    from bot.config.loaded import LoadedConfig

__all__ = ["add_parsers", "cmd_ask", "console_envelope", "resolve_role"]


def console_envelope(text: str, role: str | None) -> Envelope:
    """A message typed by the owner at this terminal."""
    from board.envelope import Envelope

    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name is fine in containers
        user = "owner"
    return Envelope(channel="console", text=text, sender=user, sender_name=user, is_owner=True, role_hint=role)


def resolve_role(parts: Parts, name: str | None, router: Router | None = None) -> str | None:
    """The role ``name`` means (``Finance``, ``finance`` and ``CFO`` alike), None for none given;
    :class:`UserError` saying why when there is no such usable role. ``router``: the board's
    router made a moment ago (else one is made)."""
    from board.routing.router import unknown_role

    if name is None:
        return None
    router = router or parts.router()
    found = router.find_role(name)
    if found is not None:
        return found
    slug = name.strip().lower()
    if slug in parts.souls.roles():
        row = next(r for r in parts.souls.status() if r.role == slug)
        raise UserError(f"the role {slug!r} cannot answer: its soul file {row.path} is unusable ({row.error}) "
                        "and there is no shipped default to fall back to. Fix the file and try again "
                        "(`sabha souls` shows every soul's state)")
    raise UserError(unknown_role(name, router.roles))


async def cmd_ask(args: argparse.Namespace) -> int:
    """One question, one answer on stdout."""
    text = " ".join(args.text).strip()
    files: list[str] = args.file or []
    if not text or text == "-":
        if sys.stdin.isatty():
            if not files:
                raise UserError('nothing to ask: give the question as arguments, e.g. sabha ask "what is our runway?"')
            text = ""
        else:
            text = sys.stdin.read().strip()
    if not text and not files:
        raise UserError("nothing to ask: give the question as arguments or on stdin")
    loaded = open_config(args, writes=True, plain=True)  # the config models only for a file it cannot vouch for
    attachments = _attachments(loaded, files)  # a path that cannot be sent stops here: nothing asked

    async def body(board: Board) -> int:
        parts = board.parts
        router = parts.router()  # reads every soul: once for the role, the route and the answer
        role = resolve_role(parts, args.role, router)
        envelope = console_envelope(text, role)
        route = router.route(envelope)
        if args.why:
            note(f"route: {' then '.join((route.role, *route.also))} ({route.reason})")
        if route.kind == "chat" and not route.error:
            model = parts.runner.model_for(parts.souls.profile(route.role))
            chain = [model, *loaded.config.llm.fallbacks]
            keyless = keyless_models(loaded, chain)
            if len(keyless) == len(dict.fromkeys(chain)):  # nothing in the chain could answer: call nothing
                raise UserError(key_advice(loaded, *keyless[0]))
            for model_and_env in keyless:
                note(f"warning: {key_advice(loaded, *model_and_env)}")
        if attachments:
            from bot.cli.attach import ask_with_files

            reply = await ask_with_files(board, envelope, attachments, route)
        else:
            reply = await board.handle(envelope, route=route)
        from bot.cli.screen import say, with_button_line  # wraps at word boundaries on a terminal

        say(with_button_line(reply.render(), reply.buttons))
        return 1 if reply.kind == "error" or reply.degraded else 0

    return await with_board(loaded, body, warn_keys=False)


def _attachments(loaded: LoadedConfig, files: list[str]) -> tuple[Attachment, ...]:
    """The files of ``--file``, each checked (:class:`UserError` for one that cannot be sent) and named."""
    if not files:
        return ()
    from bot.cli.attach import describe, local_attachment

    limit_for = loaded.config.media.settings().limit_for
    attachments = tuple(local_attachment(path, limit_for) for path in files)
    for attachment in attachments:
        note(f"attached: {describe(attachment)}")
    return attachments


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha ask``."""
    p = sub.add_parser("ask", parents=[common], help="ask one question and print the answer",
                       description="Ask one question; the answer prints as '<emoji> <Name>: <text>'. "
                                   "With --file the board reads the file(s) first and answers about them, "
                                   "e.g. sabha ask --file deck.pdf \"what is weak here?\". "
                                   "Exit code 1 when the answer is an error or degraded.")
    p.add_argument("--role", help="the role that answers, by slug or name, any case (default: general)")
    p.add_argument("--why", action="store_true",
                   help="say on stderr which role answers and why (what in the message named it)")
    p.add_argument("--file", action="append", metavar="PATH",
                   help="send a file with the question (a document: PDF, DOCX, XLSX, CSV, text; a picture; a "
                        "voice note or audio file); repeat for several. The board reads it as it reads a file "
                        "sent on Telegram or WhatsApp")
    p.add_argument("text", nargs="*", help="the question ('-' or nothing reads stdin)")
    p.set_defaults(handler=cmd_ask)
