"""``sabha souls``: every role, its soul file, the version in use, its model and any problem.

It reads the workspace and nothing else: no state database is opened or created. A role
whose file is broken or missing shows where its answers come from now (the last good
version, the shipped default) or that it cannot answer, and the error in one line.
Columns are aligned by terminal width, so wide emoji keep the table straight.
"""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from bot.cli.common import UserError, emit
from bot.cli.where import open_layout

__all__ = ["add_parsers", "cmd_souls"]

#: What the source of a soul means, for the table.
SOURCES = {
    "workspace": "",
    "built-in default": "the shipped default (the file is unusable)",
    "last good": "the last good version (the file is unusable)",
    "broken": "cannot answer: the file is unusable and there is nothing to fall back to",
    "missing": "cannot answer: no soul file",
    "rejected": "cannot answer: the file points outside the workspace",
}


async def cmd_souls(args: argparse.Namespace) -> int:
    """List roles, soul files, versions, models and load errors; exit 1 when a role cannot answer."""
    from board.llm.registry import split_model
    from board.workspace.souls import LAST_GOOD_DIR, SoulStore
    from bot.cli.table import table
    from bot.config.file import KNOWN_PROVIDERS

    loaded = open_layout(args)  # the workspace, roster and model, checked; not the whole config
    for name in ("sabha.souls", "sabha.files"):  # the table below says what their log lines would
        logging.getLogger(name).setLevel(logging.CRITICAL)
    workspace, roster = loaded.workspace, loaded.roster
    if not workspace.is_dir():
        raise UserError(f"the workspace {workspace} does not exist; run `sabha init` to create one "
                        f"(or fix workspace: in {loaded.source})")
    store = SoulStore(workspace, roster, keep_dir=loaded.data_dir / LAST_GOOD_DIR, remember=False)
    rows = store.status()
    profiles = {p.role: p for p in store.profiles()}
    models = {role: p.model or loaded.model for role, p in profiles.items()}
    if args.json:
        emit(json.dumps([{"role": r.role, "file": str(r.path), "version": r.version, "source": r.source,
                          "model": models.get(r.role), "error": r.error} for r in rows], indent=2, ensure_ascii=False))
        return 0 if all(r.version for r in rows) else 1
    emit(f"roster: {roster.name}   workspace: {workspace}")
    body: list[list[str]] = []
    notes: list[tuple[int, str]] = []
    bad_models = False
    for r in rows:
        p = profiles.get(r.role)
        try:
            shown = str(r.path.relative_to(workspace))
        except ValueError:
            shown = str(r.path)
        model = models.get(r.role, "-")
        body.append([r.role, f"{p.emoji} {p.name}" if p else "-", r.version or "-", model, shown])
        if r.source != "workspace":
            notes.append((len(body) - 1, f"now: {SOURCES.get(r.source, r.source)}"))
        if r.error:
            notes.append((len(body) - 1, f"error: {r.error}"))
        if p and split_model(model)[0] not in KNOWN_PROVIDERS:
            bad_models = True
            notes.append((len(body) - 1, f"error: model {model!r} names no known provider "
                                         f"({', '.join(KNOWN_PROVIDERS)}); write it as provider:model"))
    lines = table(["ROLE", "NAME", "VERSION", "MODEL", "FILE"], body)
    emit(lines[0])
    for index, line in enumerate(lines[1:]):
        emit(line)
        for _, text in (n for n in notes if n[0] == index):
            emit(f"    {text}")
    return 1 if bad_models or any(r.version is None for r in rows) else 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha souls``."""
    p = sub.add_parser("souls", parents=[common], help="list roles, soul files, versions and errors",
                       description="Every role with its soul file, the version in use, its model and any load "
                                   "error (and what answers instead). Exit code 1 when a role cannot answer.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_souls)
