"""A reply's buttons as Discord message components, and the command a pressed one stands for.

A :class:`board.envelope.Button` (Ratify / Veto / Revisit under a decision, Done / Snooze under a reminder,
Allow once / Always allow tool / Deny under a tool's consent question, Start / Cancel before a meeting ...) is a
button component (type 2) in one action row (type 1) under the reply's last message. Its ``custom_id`` is
:data:`PREFIX` followed by the button's command (``sabha:/ratify m-20261129-ab12``): the command is at most 64
bytes (:data:`board.envelope.BUTTON_COMMAND_BYTES`), so the id stays well inside Discord's 100 characters, and a
press needs nothing stored to be understood, across restarts and replicas. :func:`command_of` reads it back
(anything else: not ours, None). Its style says what it does: the approving ones green (success), the refusing
ones red (danger), the rest grey (:func:`style_of`).

:func:`button_view` builds the components as a ``discord.ui.View`` (no timeout: the buttons live as long as
the message; every item has a ``custom_id``, so the view is persistent and needs no callback: a press reaches
the channel as an ``INTERACTION_CREATE``, :mod:`.interactions`); :func:`component_rows` is the same as the
JSON Discord takes (``components`` of a message).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord

from board.envelope import Button

__all__ = ["CUSTOM_ID_CHARS", "LABEL_CHARS", "PREFIX", "button_view", "command_of", "component_rows", "custom_id",
           "style_of"]

#: What every custom_id of Sabha's buttons starts with.
PREFIX = "sabha:"
#: Discord's limits: a custom_id's characters, a button label's characters.
CUSTOM_ID_CHARS = 100
LABEL_CHARS = 80

_GREEN = frozenset({"ratify", "allow", "done", "start", "yes"})
_RED = frozenset({"veto", "deny", "cancel_meeting", "no"})


def custom_id(button: Button) -> str:
    """``sabha:<command>``; ValueError past Discord's 100 characters (a Button's 64 bytes never are)."""
    value = PREFIX + button.command
    if len(value) > CUSTOM_ID_CHARS:
        raise ValueError(f"a Discord custom_id is at most {CUSTOM_ID_CHARS} characters: {value!r}")
    return value


def command_of(value: str | None) -> str | None:
    """The command a pressed button's ``custom_id`` stands for (None: not one of Sabha's buttons)."""
    if not value or not value.startswith(PREFIX):
        return None
    command = value[len(PREFIX):].strip()
    return command if command.startswith("/") and len(command) > 1 else None


def style_of(button: Button) -> discord.ButtonStyle:
    """Green for a button that approves (``/ratify``, ``/allow``, ``/done``, ``/start_meeting``, a yes), red for
    one that refuses (``/veto``, ``/deny``, ``/cancel_meeting``, a no), grey otherwise."""
    words = button.command.lstrip("/").split()
    verb = words[0].lower() if words else ""
    answer = words[-1].lower() if len(words) > 1 else ""
    if verb in _GREEN or verb == "start_meeting" or answer == "yes":
        return discord.ButtonStyle.success
    if verb in _RED or answer == "no":
        return discord.ButtonStyle.danger
    return discord.ButtonStyle.secondary


def button_view(buttons: Sequence[Button]) -> discord.ui.View | None:
    """The buttons as a persistent ``discord.ui.View`` (None: no buttons)."""
    if not buttons:
        return None
    view = discord.ui.View(timeout=None)
    for button in buttons:
        view.add_item(discord.ui.Button(label=button.label[:LABEL_CHARS], style=style_of(button),
                                        custom_id=custom_id(button)))
    return view


def component_rows(buttons: Sequence[Button]) -> list[dict[str, Any]]:
    """The buttons as a message's ``components`` JSON (one action row; empty: no buttons)."""
    view = button_view(buttons)
    return [] if view is None else list(view.to_components())
