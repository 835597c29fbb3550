"""The stores' SQL in a backend's own form.

Stores write ``?`` placeholders (SQLite's, and the DB-API's ``qmark`` style); PostgreSQL numbers them
(``$1``, ``$2`` ...). :func:`numbered` rewrites them, leaving alone any ``?`` inside a string literal, a
quoted identifier or a comment, so a statement that stores a literal question mark keeps it.
"""

from __future__ import annotations

import functools

__all__ = ["numbered"]


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
