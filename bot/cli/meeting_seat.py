"""The owner at the table in ``sabha meeting``: lines typed while the meeting runs speak to it.

On a terminal (stdin and stdout both), ``sabha meeting`` reads lines while its meeting runs, with a
prompt_toolkit prompt under the statements (printed lines go above it, ``patch_stdout``):

- a plain line is a contribution (:meth:`board.room.convene.BoardRoom.contribute`, ``via="terminal"``), quoted to
  every member in the next round; ``@role ...`` addresses one member;
- ``/wrap``, ``/pause``, ``/resume``, ``/extend`` and ``/cancel`` are the meeting's controls
  (:meth:`~board.room.convene.BoardRoom.control`), applied at its next phase boundary;
- Ctrl-C does what it does without the prompt: the command stops with ``Interrupted.`` (exit code 130, the
  meeting recorded as cancelled: :mod:`bot.cli.interrupt`); Ctrl-D stops reading and the meeting goes on.

Piped (stdin not a terminal) nothing is read: the meeting runs as it always did.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from bot.cli.screen import on_terminal, say

if TYPE_CHECKING:
    from board.room.convene import BoardRoom

__all__ = ["PROMPT", "SEAT_LINE", "TerminalSeat", "seat_wanted"]

#: Said once when the meeting starts (the printer of :mod:`bot.cli.meeting_view`).
SEAT_LINE = "Type to speak to the board; /wrap to end after this round."
PROMPT = "you> "
#: What each control command (:class:`board.room.table.ControlKind`, by value: ``sabha --help`` imports
#: this module and no meeting code) does, said when it is stored.
ASKED = {
    "wrap": "wrapping up: the meeting ends after this round and goes to the decision",
    "pause": "pausing: no new round starts until /resume",
    "resume": "resuming",
    "extend": "one more round asked for (within board.meetings.max_extra_rounds)",
    "cancel": "cancelling the meeting (no decision)",
}
HELP = "Type to speak to the board (@role for one member); /wrap, /pause, /resume, /extend, /cancel."


def seat_wanted() -> bool:
    """Whether ``sabha meeting`` reads typed lines: stdin and stdout are terminals."""
    stream = sys.stdin
    return stream is not None and stream.isatty() and on_terminal()



def _token() -> str:
    """A fresh id for the owner's contribution (``secrets`` imported here: not by ``sabha --help``)."""
    import secrets

    return secrets.token_urlsafe(12)

class TerminalSeat:
    """Reads the owner's lines for running meeting ``meeting_id`` until cancelled (see the module docstring)."""

    def __init__(self, room: BoardRoom, meeting_id: str) -> None:
        self.room = room
        self.meeting_id = meeting_id

    async def take(self, line: str) -> None:
        """One typed line: a control command, or a contribution."""
        text = line.strip()
        if not text:
            return
        if text.startswith("/"):
            from board.room.table import ControlKind

            word = text[1:].split(maxsplit=1)[0].lower() if len(text) > 1 else ""
            if word not in ASKED:
                say(f"(not a meeting command: {text.split()[0]}. {HELP})")
                return
            await self.room.control(self.meeting_id, ControlKind(word), by="the owner (terminal)")
            say(f"({ASKED[word]})")
            return
        await self.room.contribute(self.meeting_id, sender="owner", name="the owner", text=text, via="terminal",
                                   message_id=_token())
        say("(sent: the board hears it in the next round)")

    async def read(self) -> None:
        """Read lines until cancelled, or until Ctrl-D (the meeting goes on)."""
        import asyncio
        import signal

        from prompt_toolkit import PromptSession
        from prompt_toolkit.patch_stdout import patch_stdout

        session: PromptSession[str] = PromptSession()
        with patch_stdout(raw=True):
            while True:
                try:
                    line = await session.prompt_async(PROMPT, handle_sigint=False)
                except KeyboardInterrupt:  # Ctrl-C is a key while the prompt reads: make it the SIGINT it was
                    asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGINT)
                    return
                except EOFError:
                    say("(no more input: the meeting goes on; Ctrl-C stops it)")
                    return
                try:
                    await self.take(line)
                except Exception as exc:  # noqa: BLE001 - the meeting goes on; the owner may type again
                    say(f"(not sent: {exc})")
