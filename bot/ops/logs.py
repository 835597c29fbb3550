"""How Sabha logs: human lines on a terminal, JSON lines under systemd, secrets never.

:func:`setup_logging` installs one stderr handler on the root logger (calling it again
changes level and format in place). The format is ``text`` (``time LEVEL logger:
message``), ``json`` (one object per line: ``ts``, ``level``, ``logger``, ``msg``, any
structured ``extra`` fields such as a turn's ``channel``, ``session_key``, ``role``,
``latency_ms``, tokens and ``cost_usd``, and ``exc`` for a traceback) or ``auto``: JSON
when systemd runs us (``$INVOCATION_ID`` or ``$JOURNAL_STREAM`` is set), else text.

Redaction: :data:`REDACTOR` (from :mod:`board.masking`, the one masking function every
writer uses: logs, transcripts, the state db, CLI output) holds every secret Sabha knows
(the values of :data:`SECRET_ENV` and whatever the config holds as a secret, added by
:func:`protect_config`). :class:`RedactingFilter` sits on the root handler and replaces
them with ``***`` in messages, arguments, structured fields and tracebacks; uncaught
exceptions go through the same :func:`redact` (:func:`setup_logging` wraps
``sys.excepthook``), and so can any text shown to a person (``/status``, CLI errors).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TextIO

from board.masking import MASK, MIN_SECRET_CHARS, REDACTOR, Redactor, mask, mask_value

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "REDACTOR",
    "SECRET_ENV",
    "JsonFormatter",
    "LogFormat",
    "RedactingFilter",
    "Redactor",
    "choose_format",
    "config_secrets",
    "protect_config",
    "redact",
    "setup_logging",
]

LogFormat = Literal["text", "json", "auto"]

#: Environment variables whose values are secrets wherever they turn up.
SECRET_ENV = ("TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "WHATSAPP_ACCESS_TOKEN",
              "WHATSAPP_APP_SECRET", "SABHA_DB_PASSWORD", "PGPASSWORD")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_SECRET_KEY_SUFFIXES = ("token", "secret", "api_key", "password", "app_secret", "access_token")
# The attributes every LogRecord has; anything else came in through ``extra=``.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


def redact(text: str) -> str:
    """``text`` with every secret Sabha knows masked (:func:`board.masking.mask`)."""
    return mask(text)


def _redact_value(value: Any) -> Any:
    masked = mask_value(value)
    return list(masked) if isinstance(masked, tuple) else masked


class RedactingFilter(logging.Filter):
    """Masks secrets in a record before any handler formats it (message, structured
    fields, traceback). Never drops a record."""

    def __init__(self, redactor: Redactor = REDACTOR) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not len(self.redactor):
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: keep what we can show
            message = f"{record.msg!r} {record.args!r}"
        record.msg = self.redactor(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and isinstance(value, (str, Mapping, list, tuple)):
                setattr(record, key, _redact_value(value))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts`` (UTC, ISO 8601), ``level``, ``logger``, ``msg``,
    the record's ``extra`` fields, and ``exc`` when there is a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                body[key] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            body["exc"] = record.exc_text
        if record.stack_info:
            body["stack"] = record.stack_info
        return json.dumps(body, ensure_ascii=False, default=str)


class _TextFormatter(logging.Formatter):
    """:data:`TEXT_FORMAT`, with ``trace_id=...`` at the end of a line written inside a traced span
    (``telemetry.enabled``: :mod:`board.telemetry.logs`)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        trace = getattr(record, "trace_id", None)
        return f"{line} trace_id={trace}" if trace else line


def choose_format(fmt: str, env: Mapping[str, str] | None = None) -> Literal["text", "json"]:
    """``text`` or ``json`` for the configured ``fmt`` (``auto``: JSON under systemd)."""
    if fmt in ("text", "json"):
        return fmt  # type: ignore[return-value]
    env = os.environ if env is None else env
    return "json" if env.get("INVOCATION_ID") or env.get("JOURNAL_STREAM") else "text"


class _SabhaHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The root handler :func:`setup_logging` owns (recognised when called again). Without
    an explicit stream it writes to whatever ``sys.stderr`` is at the time."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self._fixed = stream

    @property
    def stream(self) -> TextIO:
        return self._fixed if self._fixed is not None else sys.stderr

    @stream.setter
    def stream(self, value: TextIO | None) -> None:
        self._fixed = value


def setup_logging(level: str | int = "WARNING", fmt: str = "auto", *, stream: TextIO | None = None,
                  env: Mapping[str, str] | None = None) -> logging.Handler | None:
    """Install (or adjust) the root handler: level, format, redaction; see the module docstring.

    Like :func:`logging.basicConfig`, it leaves a root logger that someone else already
    configured alone (an embedding program, pytest) and returns None then.
    """
    env = os.environ if env is None else env
    REDACTOR.add(env.get(name) for name in SECRET_ENV)
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _SabhaHandler)), None)
    if handler is None and root.handlers:
        return None
    if handler is None:
        handler = _SabhaHandler(stream or sys.stderr)
        handler.addFilter(RedactingFilter())
        root.addHandler(handler)
    elif stream is not None:
        handler.setStream(stream)
    handler.setFormatter(JsonFormatter() if choose_format(fmt, env) == "json" else _TextFormatter(TEXT_FORMAT))
    root.setLevel(level)
    if not getattr(sys.excepthook, "_sabha_redacts", False):
        sys.excepthook = _redacting_excepthook(sys.excepthook)
    return handler


def _redacting_excepthook(previous: Any) -> Any:
    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        import traceback

        if not len(REDACTOR):
            previous(kind, exc, tb)
            return
        sys.stderr.write(REDACTOR("".join(traceback.format_exception(kind, exc, tb))))

    hook._sabha_redacts = True  # type: ignore[attr-defined]
    return hook


def config_secrets(node: Any, key: str = "") -> list[str]:
    """Every secret value in a config (pydantic models, dicts, lists): ``SecretStr`` values
    and strings under keys that name a secret (``*token``, ``*secret``, ``api_key`` ...)."""
    found: list[str] = []
    if isinstance(node, Mapping):
        for k, v in node.items():
            found += config_secrets(v, str(k))
    elif isinstance(node, (list, tuple)):
        for v in node:
            found += config_secrets(v, key)
    elif isinstance(node, str):
        if key.lower().endswith(_SECRET_KEY_SUFFIXES):
            found.append(node)
    elif "pydantic" in sys.modules:  # else ``node`` is no pydantic object: plain data (sabha souls) loads none
        from pydantic import BaseModel, SecretStr

        if isinstance(node, SecretStr):
            found.append(node.get_secret_value())
        elif isinstance(node, BaseModel):
            for name in type(node).model_fields:
                found += config_secrets(getattr(node, name), name)
    return found


def protect_config(config: Any) -> int:
    """Mask every secret of ``config`` (and :data:`SECRET_ENV`) in logs from now on; how many are known."""
    REDACTOR.add(config_secrets(config))
    REDACTOR.add(os.environ.get(name) for name in SECRET_ENV)
    return len(REDACTOR)
