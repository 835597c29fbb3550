"""Dispatch: an admitted message answered by memory talk, a command, a meeting or a chat turn; written where
a meeting runs by someone at its table, it is a contribution to that meeting (:mod:`board.answer.sitting`).

It runs inside the message's spending context (:mod:`board.answer.answer` sets it). Before anything
that calls a model, the budget's daily limits may stop it, and a stranger's limit already closed for
today refuses it; a model call that would pass a stranger's limit is not made (:class:`SpendRefused`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from board.answer.admit import Admitted, calls_model
from board.answer.door import Door
from board.answer.sitting import contribute
from board.commands.registry import system_reply
from board.envelope import Envelope, Reply, ReplyKind
from board.spending.allowance import SpendRefused
from board.workspace.files import one_look

__all__ = ["dispatch", "media_notice"]


def media_notice(notices: Iterable[str]) -> str:
    """What could not be read, as one paragraph for the sender ("" when everything was read)."""
    lines = [f"⚠️ {n}" for n in dict.fromkeys(notices)]
    return "\n".join(lines)


def _reply(door: Door, envelope: Envelope, role: str, text: str, *, kind: ReplyKind) -> Reply:
    return system_reply(door.souls, envelope, role, text, kind=kind)


async def dispatch(asked: Admitted, door: Door, *, look: object | None = None) -> Reply:
    """The reply to an admitted message (its attachments read), inside its sender's spending context.
    ``look``: the admission's look at the files (:func:`~board.workspace.files.new_look`), which a chat turn
    that starts at once goes on with."""
    envelope, route = asked.envelope, asked.route
    if route.kind == "chat" and door.seats is not None and door.meetings_enabled:  # where a meeting runs?
        noted = await contribute(envelope, door.seats)
        if noted is not None:
            return _reply(door, envelope, route.role, noted, kind="command")
    if route.kind == "chat" and door.memory_talk is not None and not envelope.attachments:
        said = await door.memory_talk(envelope, route.text)  # "what do you remember about me": from the store
        if said is not None:
            return _reply(door, envelope, route.role, said, kind="command")
    if calls_model(route):
        stop = await asked.budget_stop(door)
        if stop is not None:
            return _reply(door, envelope, route.role, stop.text, kind="error")
        refused = await door.spend.check() if asked.allowance is not None else None
        if refused is not None:  # a limit is already closed for today
            return _reply(door, envelope, route.role, refused.text, kind="error")
    try:
        if route.kind in ("command", "meeting"):
            return await door.commands.run_command(envelope, route)
        return await _chat(asked, door, look)
    except SpendRefused as exc:  # a model call would have passed a stranger's limit: it was not made
        return _reply(door, envelope, route.role, exc.text, kind="error")


async def _chat(asked: Admitted, door: Door, look: object | None = None) -> Reply:
    """One turn of the route's role; with several roles mentioned, each answers in its own
    session, in order, and the reply carries every answer under its speaker's label.

    Attachments (already read, :mod:`board.media`) join the text as quoted data, pictures as
    image parts; what could not be read is said once, before the answer (alone, with no
    model call, when nothing else was sent)."""
    envelope, route = asked.envelope, asked.route
    await door.people.said(envelope, route.text)  # for the note the person's other channels show
    given = door.media.turn_input(envelope, route.text)
    if given.empty:
        return _reply(door, envelope, route.role, media_notice(given.notices) or "Send a message with some text.",
                      kind="error")
    lock = door.locks.lock_for(route.session_key)
    if lock.locked():  # it waits for another turn of the session: the files may change meanwhile, look again then
        look = None
    async with lock:
        with one_look(look):  # the soul files and templates looked at once this turn (with its admission)
            reply = await door.runner.turn(route.role, route.session_key, envelope, given.text, images=given.images)
    parts = [reply.text]
    for role in route.also:  # the router is asked only when others were mentioned: it costs the profiles
        key = door.router().key_for(envelope, role)
        async with door.locks.lock_for(key):
            more = await door.runner.turn(role, key, envelope, given.text, images=given.images)
        parts.append(f"{more.label}: {more.text}")
    notice = media_notice(given.notices)
    if notice:
        parts.insert(0, notice)
    return replace(reply, text="\n\n".join(parts)) if len(parts) > 1 else reply
