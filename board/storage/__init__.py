"""Storage: the one layer that owns where Sabha's state lives, SQLite and PostgreSQL side by side.

``state.url`` picks the backend: nothing (or ``sqlite:///path``) is the embedded SQLite state db
(:class:`board.db.StateDB`, one file under the data dir); ``postgresql://user@host/db`` (password from
the environment, never the config file) is a PostgreSQL server that several ``sabha run`` replicas can
share (:mod:`board.storage.postgres`).

What is here so far (issue 29 is under way; see notes/storage.md):

* :mod:`board.storage.database` -- the :class:`Database` and :class:`Tx` protocols every backend
  implements, :class:`Dialect`, and :class:`StorageError`, the one exception a store sees when its backend
  cannot do what it was asked (each backend maps its driver's errors to it);
* :mod:`board.storage.url` -- :class:`StateURL`, the parsed ``state.url`` (the password comes from the
  environment; ``str()`` never shows it);
* :mod:`board.storage.sql` -- the SQL the stores write (``?`` placeholders) in a backend's own form;
* :mod:`board.storage.migrations` -- the shared rules of numbered migrations (names, duplicates, a db
  from a newer Sabha refused), per dialect;
* :mod:`board.storage.sqlite` -- :class:`StateDB` (alias ``SqliteDatabase``), the embedded default;
* :mod:`board.storage.open` -- :func:`open_database`, the backend ``state.url`` names, migrated;
* :mod:`board.storage.leases` -- :class:`Leases`, which replica works a conversation now (expiring,
  renewed leases in the ``leases`` table);
* :mod:`board.storage.postgres` -- :class:`PostgresDatabase` (asyncpg pool; migrations each in one
  transaction under an advisory lock, so replicas starting together migrate once).
"""

from __future__ import annotations

from board.storage.database import Database, Dialect, DuplicateKey, Row, Statement, StorageError, Tx, Work
from board.storage.leases import Lease, Leases
from board.storage.open import open_database
from board.storage.url import StateURL, parse_state_url

__all__ = ["Database", "Dialect", "DuplicateKey", "Lease", "Leases", "Row", "StateURL", "Statement", "StorageError",
           "Tx", "Work", "open_database", "parse_state_url"]
