"""What consent says: the owner's question with its buttons, the notes the model reads when a call does not
run, and how a consent answer (``/allow``, ``/deny``) is known from its text (the intake takes those out of the
conversation's lane: the turn that waits for the answer holds that lane).

Arguments are the model's and may carry anything: they are shown as data (JSON, capped, in a fenced block whose
fence they cannot close), never as the message's own words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from board.envelope import Button
from board.workspace.quoting import plain_line

__all__ = [
    "ARGUMENT_CHARS",
    "CONSENT_LANE",
    "answers_consent",
    "ask_buttons",
    "ask_text",
    "consent_lane",
    "quoted_arguments",
    "span_words",
]

#: How much of a call's arguments the owner is shown (the rest: "... N more characters").
ARGUMENT_CHARS = 1200
#: What a consent answer's lane ends with: its own lane beside the conversation's (:func:`consent_lane`).
CONSENT_LANE = "#consent"
_ANSWER = re.compile(r"^\s*/(allow|deny)(@\w+)?(\s|$)", re.IGNORECASE)


def answers_consent(text: str) -> bool:
    """Whether ``text`` is a consent answer (``/allow ...`` or ``/deny ...``, a press of their buttons)."""
    return _ANSWER.match(text or "") is not None


def consent_lane(lane: str) -> str:
    """The lane a consent answer in conversation ``lane`` is answered in: beside the conversation's own, so an
    Allow pressed where the advisor waits is not queued behind the very turn that waits for it."""
    return lane if lane.endswith(CONSENT_LANE) else f"{lane}{CONSENT_LANE}"


def quoted_arguments(arguments: Mapping[str, Any], limit: int = ARGUMENT_CHARS) -> str:
    """``arguments`` as JSON, cut at ``limit`` characters (saying how many more), with no run of three
    backticks left to close the block it is shown in."""
    text = json.dumps(dict(arguments), ensure_ascii=False, indent=1, sort_keys=True, default=str)
    if len(text) > limit:
        text = f"{text[:limit]}\n... {len(text) - limit} more characters"
    return text.replace("```", "`\u200b`\u200b`")


def span_words(seconds: float) -> str:
    """``120`` -> ``2 minutes``; ``45`` -> ``45 seconds``."""
    if seconds < 1:
        return "less than a second"
    whole = round(seconds)
    if whole >= 60 and whole % 60 == 0:
        minutes = whole // 60
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{whole} second{'s' if whole != 1 else ''}"


def ask_text(*, number: int, label: str, advisor: str, arguments: Mapping[str, Any], wait_s: float,
             for_member: str | None = None) -> str:
    """The owner's question: who wants to run what, with which arguments, and how to answer."""
    whom = f" for {plain_line(for_member, 80)}" if for_member else ""
    return (f"\U0001f527 {advisor} wants to run {label}{whom} (#{number}). It changes things outside "
            f"Sabha, so it runs only if you allow it.\n\nArguments, as the advisor sent them:\n"
            f"```json\n{quoted_arguments(arguments)}\n```\n"
            f"Allow once, always allow {label}, or deny. The advisor waits up to {span_words(wait_s)}, then "
            f"answers without it. You can also type /allow {number}, /allow {number} always or /deny {number}.")


def ask_buttons(number: int) -> tuple[Button, ...]:
    """Allow once / Always allow this tool / Deny: each sends its command with the ask's number."""
    return (Button("Allow once", f"/allow {number}"), Button("Always allow tool", f"/allow {number} always"),
            Button("Deny", f"/deny {number}"))
