"""The owner at the table on the live meeting page: a contribution box and the meeting's controls.

``POST /ui/meetings/{id}/say`` (``text``, ``message_id``) stores what the signed-in owner wrote as a
contribution (:meth:`board.room.convene.BoardRoom.contribute`, ``via="web"``); the meeting quotes it to every
member in its next round. ``message_id`` is made by the page (a fresh one after each send), so a form sent
twice (a double click, a resend after a dropped connection) is stored once. ``POST /ui/meetings/{id}/control``
(``kind``: wrap, pause, resume, extend, cancel) stores a control (:meth:`~board.room.convene.BoardRoom.control`)
that the meeting applies at its next phase boundary. Both go through the state db, never this process's
memory: with replicas the meeting may run on another one. Both need the page's CSRF token (the guard of
:mod:`bot.web.app`) and a meeting that is still running (409 otherwise, saying so).

Sent by the page's script (``Accept: application/json``) they answer JSON (``ok``, ``said``; ``problem``);
sent as a plain form (no script) they come back to the meeting page with a note.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from board.room.table import ControlKind
from bot.web.context import PREFIX, WebContext, context_of

__all__ = ["CONTROLS", "MAX_CONTRIBUTION", "TableBox", "routes", "table_box"]

log = logging.getLogger("sabha.web")

MAX_CONTRIBUTION = 2000  # characters
MESSAGE_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
#: The buttons, in order: (kind, label, what it does).
CONTROLS: tuple[tuple[str, str, str], ...] = (
    (ControlKind.WRAP.value, "Wrap up", "End after the round in progress and go to the decision."),
    (ControlKind.PAUSE.value, "Pause", "No new round starts until you resume (the round in progress finishes)."),
    (ControlKind.RESUME.value, "Resume", "Go on after a pause."),
    (ControlKind.EXTEND.value, "One more round", "Add one round, within board.meetings.max_extra_rounds."),
    (ControlKind.CANCEL.value, "Cancel", "End the meeting now, without a decision."),
)
#: What the page says once a control is stored (the meeting says when it applies it, in the sequence).
ASKED = {
    ControlKind.WRAP: "Wrapping up: the meeting ends after the round in progress and goes to the decision.",
    ControlKind.PAUSE: "Pausing: no new round starts until you resume.",
    ControlKind.RESUME: "Resuming the meeting.",
    ControlKind.EXTEND: "One more round asked for (within the caps).",
    ControlKind.CANCEL: "Cancelling the meeting.",
}
SENT = "Sent: the board hears it in the next round."


@dataclass(frozen=True)
class TableBox:
    """What the page's contribution box needs: a fresh message id, the controls, the length cap."""

    message_id: str
    controls: tuple[tuple[str, str, str], ...] = CONTROLS
    max_text: int = MAX_CONTRIBUTION


def table_box() -> TableBox:
    """The box of a page rendered now (its own message id)."""
    return TableBox(message_id=secrets.token_urlsafe(12))


async def _still_running(ctx: WebContext, meeting_id: str) -> str:
    """"" when meeting ``meeting_id`` runs (here or on another replica); else why nothing can be sent to it. The
    stored row decides: a meeting that stored its end is over although its task here still tells its subscribers
    (the page may already say it ended)."""
    row = await ctx.meetings.get(meeting_id)
    if row is None or row.id != meeting_id:
        if meeting_id in ctx.room.running():  # not stored yet: it is starting
            return ""
        return f"No meeting {meeting_id[:80]!r}; the list is at /ui/meetings."
    if row.status != "running":
        return f"This meeting has ended ({row.stop_reason or row.status}): nothing more can be said to it."
    return ""


def _answer(request: web.Request, meeting_id: str, *, status: int, text: str, said: Mapping[str, Any] | None = None,
            ) -> web.StreamResponse:
    """JSON for the page's script; otherwise back to the meeting page with ``text`` as its note."""
    ok = status < 400
    if "application/json" in request.headers.get("Accept", ""):
        body = {"ok": ok, ("said" if ok else "problem"): text, **(dict(said) if said else {})}
        return web.json_response(body, status=status)
    ctx = context_of(request)
    token = ctx.note("ok" if ok else "problem", text)
    raise web.HTTPSeeOther(f"{PREFIX}/meetings/{meeting_id}?note={token}#table")


async def say(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    meeting_id = request.match_info["id"]
    form = await request.post()
    text = str(form.get("text") or "").strip()
    message_id = str(form.get("message_id") or "")
    if not text:
        return _answer(request, meeting_id, status=400, text="Write something first: the box is empty.")
    if len(text) > MAX_CONTRIBUTION:
        return _answer(request, meeting_id, status=400, text=f"That is {len(text):,} characters; keep a "
                       f"contribution under {MAX_CONTRIBUTION:,} (say the rest in a second one).")
    if not MESSAGE_ID.fullmatch(message_id):  # a form from an old page, or made by hand: one of our own
        message_id = secrets.token_urlsafe(12)
    problem = await _still_running(ctx, meeting_id)
    if problem:
        return _answer(request, meeting_id, status=409, text=problem)
    stored = await ctx.room.contribute(meeting_id, sender="owner", name="the owner", text=text, via="web",
                                       message_id=message_id)
    log.info("web: the owner spoke to meeting %s (contribution %d, %d characters)", meeting_id, stored.id, len(text))
    return _answer(request, meeting_id, status=200, text=SENT, said={"id": stored.id})


async def control(request: web.Request) -> web.StreamResponse:
    ctx = context_of(request)
    meeting_id = request.match_info["id"]
    form = await request.post()
    try:
        kind = ControlKind(str(form.get("kind") or ""))
    except ValueError:
        names = ", ".join(k.value for k in ControlKind)
        return _answer(request, meeting_id, status=400, text=f"Unknown control; one of {names}.")
    problem = await _still_running(ctx, meeting_id)
    if problem:
        return _answer(request, meeting_id, status=409, text=problem)
    stored = await ctx.room.control(meeting_id, kind, by="the owner (web)")
    log.info("web: the owner asked meeting %s to %s (control %d)", meeting_id, kind.value, stored.id)
    return _answer(request, meeting_id, status=200, text=ASKED[kind], said={"id": stored.id})


def routes() -> list[web.RouteDef]:
    """The table's routes (relative to ``/ui``)."""
    return [web.post("/meetings/{id}/say", say), web.post("/meetings/{id}/control", control)]
