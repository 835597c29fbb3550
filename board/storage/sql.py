"""The stores' SQL in a backend's own form.

Stores write ``?`` placeholders (SQLite's, and the DB-API's ``qmark`` style); PostgreSQL numbers them
(``$1``, ``$2`` ...). :func:`numbered` rewrites them, leaving alone any ``?`` inside a string literal, a
quoted identifier or a comment, so a statement that stores a literal question mark keeps it.
:class:`RowJoin` is one row of another owner's table carried in a store's statement (a turn's reads folded into one
round trip to the database).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

__all__ = ["RowJoin", "numbered"]


@dataclass(frozen=True)
class RowJoin:
    """At most one row of another owner's table, read in a statement of this one's: a turn's reads are round trips
    to the database's thread, so they are folded into one statement (issue 44). ``join`` is a ``LEFT JOIN`` of the
    owner's table under an alias of its own, with ``params`` for its ``?`` placeholders; ``columns`` is the select
    list, every column named with a prefix of its own so it meets no column of the carrying statement. The carrying
    statement starts from one row (``FROM (SELECT 1 AS one) o``), so the joined row is read from its first row; its
    columns are all NULL when there is no such row. The owner writes the join and reads the row back."""

    columns: str
    join: str
    params: tuple[Any, ...]


@functools.lru_cache(maxsize=1024)
def numbered(sql: str) -> str:
    """``sql`` with each ``?`` placeholder as ``$1``, ``$2`` ... (PostgreSQL's form)."""
    out: list[str] = []
    n = 0
    i = 0
    length = len(sql)
    while i < length:
        ch = sql[i]
        if ch in ("'", '"'):  # a string literal or quoted identifier: doubled quotes stay inside
            end = i + 1
            while end < length:
                if sql[end] == ch:
                    if end + 1 < length and sql[end + 1] == ch:
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i:end + 1])
            i = end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = length if end < 0 else end
            out.append(sql[i:end])
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = length if end < 0 else end + 2
            out.append(sql[i:end])
            i = end
        elif ch == "?":
            n += 1
            out.append(f"${n}")
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)
