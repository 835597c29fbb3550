"""Block Kit: a reply's buttons as Slack buttons, and what a pressed message becomes.

:func:`reply_blocks` renders a :class:`board.envelope.Reply` with buttons (ratify / veto / revisit, done /
snooze, allow ...) as ``section`` blocks holding the text (Slack caps a section at :data:`SECTION_CHARS`)
and one ``actions`` block: each button's ``value`` is the command a press sends (``/ratify m-...``), its
``action_id`` ``sabha:<n>`` (Slack wants them unique in a message), Ratify / Allow styled primary, Veto /
Deny danger. The message's ``text`` stays the plain fallback (notifications, screen readers).

:func:`pressed_blocks` is the pressed message once a press was taken: the same text, the buttons replaced by
a context line saying who pressed what and that the outcome follows in the thread (a press is a command;
its outcome is the command's reply, posted like any answer, exactly once).
"""

from __future__ import annotations

from typing import Any

from board.envelope import Button, Reply

__all__ = ["ACTION_PREFIX", "SECTION_CHARS", "button_blocks", "pressed_blocks", "reply_blocks", "text_sections"]

#: Slack's limit on a section's text.
SECTION_CHARS = 3000
#: Slack's limit on blocks in a message.
MAX_BLOCKS = 50
#: How our buttons' action ids begin (a press with another id is not ours).
ACTION_PREFIX = "sabha:"
_PRIMARY = frozenset({"ratify", "allow", "done", "start", "yes"})
_DANGER = frozenset({"veto", "deny", "stop", "cancel"})


def text_sections(text: str) -> list[dict[str, Any]]:
    """``text`` (mrkdwn) as section blocks of at most :data:`SECTION_CHARS` characters each, cut at lines."""
    sections: list[dict[str, Any]] = []
    rest = text.strip() or " "
    while rest and len(sections) < MAX_BLOCKS - 2:
        cut = len(rest) if len(rest) <= SECTION_CHARS else rest.rfind("\n", 0, SECTION_CHARS)
        if cut <= 0:
            cut = SECTION_CHARS
        sections.append({"type": "section", "text": {"type": "mrkdwn", "text": rest[:cut]}})
        rest = rest[cut:].lstrip("\n")
    return sections


def _button(n: int, button: Button) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "button", "action_id": f"{ACTION_PREFIX}{n}", "value": button.command,
                               "text": {"type": "plain_text", "text": button.label, "emoji": True}}
    word = button.command.lstrip("/").split(maxsplit=1)[0].lower() if button.command.strip("/ ") else ""
    if word in _PRIMARY or button.label.lower() in _PRIMARY:
        element["style"] = "primary"
    elif word in _DANGER or button.label.lower() in _DANGER:
        element["style"] = "danger"
    return element


def button_blocks(text: str, buttons: tuple[Button, ...]) -> list[dict[str, Any]] | None:
    """``text`` with ``buttons`` under it as blocks, or None without buttons."""
    if not buttons:
        return None
    actions = {"type": "actions", "block_id": "sabha-buttons",
               "elements": [_button(n, b) for n, b in enumerate(buttons[:25])]}
    return [*text_sections(text), actions]


def reply_blocks(reply: Reply, text: str) -> list[dict[str, Any]] | None:
    """The blocks of the message carrying ``text`` (the reply's last part), or None when it has no buttons."""
    return button_blocks(text, reply.buttons)


def pressed_blocks(text: str, presser: str, label: str) -> list[dict[str, Any]]:
    """The pressed message: its text, and a line instead of its buttons (``presser`` a Slack user id)."""
    note = f"<@{presser}> pressed *{label}*; the outcome follows in this thread."
    return [*text_sections(text), {"type": "context", "elements": [{"type": "mrkdwn", "text": note}]}]
