"""Log records at the terminal: a short human line for a person, the details in a log.

One-shot commands (``sabha ask``, ``souls`` ...) print warnings and errors on stderr as
``sabha: warning: <what happened>``: no timestamp, no logger name, no traceback (``-v``
brings the full lines back). In the interactive chat :class:`ChatLog` takes the root
logger over: every record (INFO and up, tracebacks included) goes to ``chat.log`` in the
board's data dir, and warnings and errors print as one line *above the prompt* (once per
distinct line, paths inside the board relative to it) through
whatever ``sys.stdout`` is at the time (prompt_toolkit's ``patch_stdout`` redraws the
prompt under it), so a soul edit that breaks never garbles the line being typed.
Secrets are redacted in both, as in every Sabha log.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from types import TracebackType

from bot.ops.logs import TEXT_FORMAT, RedactingFilter

__all__ = ["ChatLog", "ShortFormatter", "short_form", "use_short_lines"]

#: The longest warning the chat prints above the prompt; the log has the rest.
SHORT_CHARS = 300
LOG_FILE = "chat.log"


def short_form(record: logging.LogRecord, *, limit: int = SHORT_CHARS, base: str | None = None) -> tuple[str, bool]:
    """The record's message as one line of at most ``limit`` characters (paths under ``base``
    made relative to it), and whether anything (more lines, a traceback, the cut tail) was left out."""
    message = record.getMessage()
    if base:
        message = message.replace(base, "")
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    text = lines[0] if lines else ""
    cut = len(lines) > 1 or record.exc_info is not None
    if len(text) > limit:
        text, cut = text[: limit - 1].rstrip() + "…", True
    return text, cut


def _level_word(record: logging.LogRecord) -> str:
    if record.levelno >= logging.ERROR:
        return "error: "
    if record.levelno >= logging.WARNING:
        return "warning: "
    return ""


class ShortFormatter(logging.Formatter):
    """``sabha: warning: <message>``: one line, no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text, _ = short_form(record, limit=2000)
        return f"sabha: {_level_word(record)}{text}"


def use_short_lines(handler: logging.Handler | None, verbosity: int) -> None:
    """Give Sabha's stderr handler :class:`ShortFormatter` unless ``-v`` asked for the full lines
    (None: someone else configured logging, e.g. a test runner; leave it alone)."""
    if handler is not None and not verbosity:
        handler.setFormatter(ShortFormatter())


class _AbovePrompt(logging.Handler):
    """Writes one short line per record to the current ``sys.stdout`` (patched under a prompt)."""

    def __init__(self, log_path: Path, level: int, base: Path | None) -> None:
        super().__init__(level)
        self.log_path = log_path
        self.base = f"{base}{os.sep}" if base is not None else None
        self.addFilter(RedactingFilter())
        self._said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text, cut = short_form(record, base=self.base)  # paths inside the board: relative to it
            if text in self._said:  # the same problem again (a failing model, every turn): the log has it
                return
            self._said.add(text)
            mark = "⚠" if record.levelno < logging.ERROR else "✖"
            shown = str(self.log_path).replace(self.base, "") if self.base else str(self.log_path)
            more = f" (details in {shown})" if cut else ""
            sys.stdout.write(f"{mark} {text}{more}\n")
            sys.stdout.flush()
        except Exception:  # noqa: BLE001 - a log line must never take the chat down
            self.handleError(record)


class ChatLog:
    """``with ChatLog(data_dir, verbosity):`` routes logging as the module docstring says, and
    puts the root logger back as it was afterwards."""

    def __init__(self, data_dir: Path, verbosity: int = 0, base: Path | None = None) -> None:
        self.path = data_dir / LOG_FILE
        self.verbosity = verbosity
        self.base = base
        self._saved: tuple[list[logging.Handler], int] | None = None
        self.screen: logging.Handler | None = None  # the lines above the prompt (not the log file)

    def __enter__(self) -> ChatLog:
        root = logging.getLogger()
        self._saved = (list(root.handlers), root.level)
        handlers: list[logging.Handler] = []
        from logging.handlers import RotatingFileHandler  # here: only the terminal chat writes a log file

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            file = RotatingFileHandler(self.path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
            file.setFormatter(logging.Formatter(TEXT_FORMAT))
            file.addFilter(RedactingFilter())
            file.setLevel(logging.DEBUG if self.verbosity > 1 else logging.INFO)
            handlers.append(file)
        except OSError as exc:  # no log file: the terminal still gets the short lines
            sys.stdout.write(f"⚠ cannot write the chat log {self.path}: {exc.strerror or exc}\n")
        self.screen = _AbovePrompt(self.path, logging.INFO if self.verbosity else logging.WARNING, self.base)
        handlers.append(self.screen)
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(logging.DEBUG if self.verbosity > 1 else logging.INFO)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        if self._saved is not None:
            handlers, level = self._saved
            for handler in handlers:
                root.addHandler(handler)
            root.setLevel(level)
