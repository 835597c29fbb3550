"""``state.url``: where the state lives, parsed and checked, with the password kept out of sight.

``sqlite:///relative/or/absolute/path.db`` (or no URL: the data dir's ``sabha.db``) is the embedded
SQLite state db. ``postgresql://user@host:5432/dbname`` (``postgres://`` too) is a PostgreSQL server; its
password comes from the environment (``SABHA_DB_PASSWORD``, else ``PGPASSWORD``), never from the config
file: a URL that carries one is refused with the fix, so a config file shown to someone leaks nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from board.storage.database import Dialect

__all__ = ["PASSWORD_ENV", "SQLITE_FILE", "StateURL", "parse_state_url"]

#: Where the PostgreSQL password is read from, in this order.
#: What a PostgreSQL ``state.url`` may carry after ``?`` (TLS and where the server is); anything else is refused,
#: so a setting is never dropped quietly (``sslmode=verify-full`` must not become asyncpg's ``prefer``).
URL_PARAMS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "sslcrl", "host", "target_session_attrs")
_SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")

#: The SQLite state db's file in the data dir when ``state.url`` is not set.
SQLITE_FILE = "sabha.db"
PASSWORD_ENV: tuple[str, ...] = ("SABHA_DB_PASSWORD", "PGPASSWORD")


@dataclass(frozen=True)
class StateURL:
    """A parsed ``state.url``. ``str()`` is the URL without a password."""

    dialect: Dialect
    path: Path | None = None  # SQLite: the file
    host: str = "127.0.0.1"
    port: int = 5432
    user: str | None = None
    database: str | None = None
    password: str | None = None  # from the environment, never shown
    params: tuple[tuple[str, str], ...] = ()  # what followed ``?`` (:data:`URL_PARAMS`)

    def __str__(self) -> str:
        if self.dialect is Dialect.SQLITE:
            return f"sqlite:///{self.path}"
        user = f"{quote(self.user, safe='')}@" if self.user else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = f"?{urlencode(self.params)}" if self.params else ""
        return f"postgresql://{user}{host}:{self.port}/{quote(self.database or '', safe='')}{query}"

    def __repr__(self) -> str:
        return f"StateURL({self})"

    def dsn(self) -> str:
        """The URL for the driver (PostgreSQL; still without the password, which goes apart)."""
        return str(self)


def _shown(parts: object) -> str:
    """The URL for an error message, without a password."""
    from urllib.parse import SplitResult

    assert isinstance(parts, SplitResult)
    if parts.password is None:
        return parts.geturl()
    netloc = parts.netloc.rsplit("@", 1)[-1]
    user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0]
    return parts._replace(netloc=f"{user}:***@{netloc}").geturl()


def _params(query: str, text: str) -> tuple[tuple[str, str], ...]:
    pairs = parse_qsl(query, keep_blank_values=True)
    for name, value in pairs:
        if name in ("password", "sslpassword"):
            raise ValueError("state.url must not carry the password: remove it from the URL and export "
                             f"{PASSWORD_ENV[0]} instead")
        if name not in URL_PARAMS:
            raise ValueError(f"state.url {text}: {name}= is not a setting Sabha passes on; it understands "
                             f"{', '.join(URL_PARAMS)}")
        if name == "sslmode" and value not in _SSLMODES:
            raise ValueError(f"state.url {text}: sslmode={value} is not one of {', '.join(_SSLMODES)}")
    return tuple(pairs)


def parse_state_url(url: str, *, data_dir: Path, env: Mapping[str, str] | None = None) -> StateURL:
    """``url`` as a :class:`StateURL`; a relative SQLite path is taken from ``data_dir``.
    Raises ValueError saying what to write instead."""
    env = os.environ if env is None else env
    text = url.strip()
    if not text:
        return StateURL(Dialect.SQLITE, path=data_dir / SQLITE_FILE)
    parts = urlsplit(text)
    if parts.scheme == "sqlite":
        raw = unquote(parts.path)
        if parts.netloc or not raw.startswith("/") or raw == "/":
            raise ValueError(f"state.url {text!r}: write sqlite:///path/to/state.db (three slashes, then a path)")
        raw = raw[1:]
        path = Path(raw) if Path(raw).is_absolute() else data_dir / raw
        return StateURL(Dialect.SQLITE, path=path)
    if parts.scheme in ("postgresql", "postgres"):
        if parts.password is not None:
            raise ValueError("state.url must not carry the password: remove it from the URL and export "
                             f"{PASSWORD_ENV[0]} instead")
        params = _params(parts.query, repr(text))
        database = parts.path.lstrip("/")
        socket = dict(params).get("host", "")
        if not (parts.hostname or socket) or not database:
            raise ValueError(f"state.url {text!r}: write postgresql://user@host:5432/dbname")
        try:
            port = parts.port or 5432
        except ValueError as exc:
            raise ValueError(f"state.url {text!r}: the port is not a number ({exc})") from None
        password = next((env[name] for name in PASSWORD_ENV if env.get(name)), None)
        return StateURL(Dialect.POSTGRES, host=parts.hostname or "localhost", port=port,
                        user=unquote(parts.username or "") or None, database=unquote(database), password=password,
                        params=params)
    raise ValueError(f"state.url {_shown(parts)!r}: the scheme must be sqlite:/// or postgresql://")
