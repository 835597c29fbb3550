"""The board describing itself: ``/help`` (and ``/start``), ``/roles`` and ``/souls``.

``/help`` starts with how to talk to the board *where it is asked*: each channel says that
in its own words (:class:`Addressing`, handed to :meth:`CommandRegistry.describe_channel`: a terminal
has ``--role``, a forum has a topic per role, WhatsApp switches roles with ``/<role>``), and a
channel that said nothing gets :data:`CHAIR_ADDRESSING`. The board stays channel-agnostic: it
only keeps the wording each channel gave it. The commands follow as a table of usage and
meaning, the owner-only ones shown to the owner only.

``/souls`` says, per role, who answers, from which file, at which version and in what state
(``general: 🧭 General, SOUL.md, version dfcaa0aad47b``), never a bare ``role: v<hash>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from board.envelope import Envelope
from board.workspace.souls import SoulStatus, SoulStore

__all__ = ["BUILTIN", "CHAIR_ADDRESSING", "SINGLE_ADDRESSING", "TOPIC_ADDRESSING", "Addressing", "answer_help",
           "help_row", "help_text", "roles_text", "soul_lines"]

#: Commands every board has; /help lists the others after them.
BUILTIN = ("help", "start", "roles", "reset", "souls")

_USAGE_CELLS = 25


@dataclass(frozen=True)
class Addressing:
    """How a person addresses the board on one channel: rows of (what they write, who answers)."""

    rows: tuple[tuple[str, str], ...]


_ROLE_ROWS = (
    ("@<role> <message>", "ask one role, e.g. @finance what is our runway?"),
    ("/ask <role> <message>", "the same"),
    ("<role>: <message>", "the same"),
    ("a sentence naming a role", "that role, e.g. what does the critic think of this?"),
)

#: A channel that said nothing about itself: the chair answers plain messages.
CHAIR_ADDRESSING = Addressing((("<message>", "the chair (general) answers"), *_ROLE_ROWS))

#: A place with a topic per role (a forum): the topic's role answers there.
TOPIC_ADDRESSING = Addressing((("<message>", "the chair (general) answers, or this topic's role"), *_ROLE_ROWS))

#: Single-agent mode (``board.enabled: false``): no role addressing, the chair answers everything.
SINGLE_ADDRESSING = Addressing((("<message>", "the chair answers (single-agent mode: board.enabled is false)"),))

_COMMAND_ROWS = (
    ("/roles", "who sits on the board"),
    ("/reset [role]", "start a fresh conversation (the old one is archived)"),
    ("/souls", "soul files and their versions"),
    ("/help", "this text"),
)


def help_row(line: str) -> str:
    """A registered command's help line (``/cost [7d]: what the models cost``) as a row of the
    help table: usage in the first column, what it does in the second."""
    usage, sep, what = line.partition(": ")
    if not sep:
        return f"  {line}"
    return _row(usage, what)


def _row(usage: str, what: str) -> str:
    if len(usage) <= _USAGE_CELLS:
        return f"  {usage:<{_USAGE_CELLS}} {what}"
    return f"  {usage}\n  {'':<{_USAGE_CELLS}} {what}"


def help_text(addressing: Addressing, *, owner: bool, more: Sequence[str] = ()) -> str:
    """The ``/help`` answer: how to talk here, the built-in commands, then ``more`` help lines."""
    lines = ["Talk to the board:", *(_row(usage, what) for usage, what in addressing.rows), "Commands:"]
    lines += [_row(usage, what) for usage, what in _COMMAND_ROWS if owner or usage != "/souls"]
    lines += [help_row(line) for line in more]
    return "\n".join(lines)


def soul_lines(store: SoulStore, workspace: Path) -> list[str]:
    """``/souls``: one line per role (who, which file, which version, in what state)."""
    labels = {p.role: f"{p.emoji} {p.name}".strip() for p in store.profiles()}
    return [_soul_line(row, labels.get(row.role, row.role), workspace) for row in store.status()]


_STATES = {
    "workspace": "",
    "built-in default": "; answering with the shipped default",
    "last good": "; answering with the last good version",
}


def _soul_line(row: SoulStatus, label: str, workspace: Path) -> str:
    try:
        shown = str(row.path.relative_to(workspace))
    except ValueError:
        shown = row.path.name
    version = f"version {row.version}" if row.version else "cannot answer"
    state = _STATES.get(row.source, f"; {row.source}" if row.version else "")
    problem = f"; ERROR: {row.error}" if row.error else ""
    return f"{row.role}: {label}, {shown}, {version}{state}{problem}"


def roles_text(roster: str, store: SoulStore) -> str:
    """``/roles``: the board's members with their handles and titles."""
    if store.roster.single:
        lines = ["Single-agent mode (board.enabled is false): the chair answers everything."]
    else:
        lines = ["The board:" if roster == "board" else f"The {roster} board:"]
    for p in store.profiles():
        title = f", {p.title}" if p.title else ""
        lines.append(f"{p.emoji} {p.name} (@{p.role}{title})")
    return "\n".join(lines)


HelpLines = Callable[[Envelope], Sequence[str]]


def answer_help(envelope: Envelope, channels: Mapping[str, Addressing], more: HelpLines, *,
                single: bool = False) -> str:
    """``/help`` for ``envelope``: its channel's addressing (the chair alone when ``single``), the commands
    its sender may use."""
    addressing = SINGLE_ADDRESSING if single else channels.get(envelope.channel, CHAIR_ADDRESSING)
    return help_text(addressing, owner=envelope.is_owner, more=more(envelope))
