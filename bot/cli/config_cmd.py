"""``sabha config check``: whether the configuration will work, then which one it is.

The verdict comes first (``config OK``, or how many problems), then the few lines that say
which config is used and how it was found, the workspace, the data dir, the models, every
setting that differs from the built-in default (secrets masked), and what would go wrong: a
model whose API key is not exported (an error: exit code 1, since every answer of that model
would come back degraded), a secret written into the file instead of ``${VAR}`` (a warning).
``--verbose`` adds the whole effective config. Every section is checked, the channels'
included. Nothing is created.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from bot.cli.common import emit

__all__ = ["add_parsers", "cmd_config_check"]

#: Keys shown on their own lines above (or resolved paths that always differ from the default).
_SHOWN_ELSEWHERE = {"workspace", "data_dir", "llm.model", "llm.fallbacks"}


def _flat(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``{"a": {"b": 1}}`` as ``("a.b", 1)``; lists stay values."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _flat(value, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), node


async def cmd_config_check(args: argparse.Namespace) -> int:
    """Say whether the config works (exit 1 on a problem), then what it is, secrets masked."""
    import yaml

    from board.workspace.souls import SoulStore
    from bot.cli.keys import key_advice, keyless_models
    from bot.config import FoundBy, personal_board_dir
    from bot.config.load import load_config, masked_dump
    from bot.config.sections import Config
    from bot.ops.logs import protect_config, redact

    loaded = load_config(getattr(args, "config", None), channels=True)
    protect_config(loaded.config)
    SoulStore(loaded.workspace, loaded.roster())  # validates soul paths without opening anything
    errors = [key_advice(loaded, model, env) for model, env in keyless_models(loaded, loaded.models())]
    if errors:
        emit(f"config has {len(errors)} problem(s): see the error lines below")
    else:
        emit("config OK" + (f" ({len(loaded.warnings)} warning(s) below)" if loaded.warnings else ""))
    if loaded.source is None:
        emit(f"# config: none found (no sabha.yaml in {loaded.base_dir} or above, no personal board at "
             f"{personal_board_dir()}); these are the built-in defaults")
    else:
        emit(f"# config: {loaded.source} (found by {loaded.found_by.value})")
    if loaded.found_by is not FoundBy.NONE:
        emit(f"# workspace: {loaded.workspace}{'' if loaded.workspace.is_dir() else '  (missing: run sabha init)'}")
        emit(f"# data_dir: {loaded.data_dir}")
    llm = loaded.config.llm
    emit(f"# model: {llm.model}" + (f" (fallbacks: {', '.join(llm.fallbacks)})" if llm.fallbacks else ""))
    effective = masked_dump(loaded.config)
    defaults = dict(_flat(masked_dump(Config())))
    changed = [(key, value) for key, value in _flat(effective)
               if key not in _SHOWN_ELSEWHERE and defaults.get(key, object()) != value]
    for key, value in changed:
        emit(redact(f"# set: {key}: {value if isinstance(value, str) else yaml.safe_dump(value).strip()}"))
    for warning in loaded.warnings:
        emit(f"# warning: {warning}")
    for error in errors:
        emit(f"# error: {error}")
    if getattr(args, "verbose", 0):
        emit(redact(yaml.safe_dump(effective, sort_keys=False, allow_unicode=True).rstrip()))
    else:
        emit("(`sabha config check --verbose` prints the whole effective config, secrets masked)")
    return 1 if errors else 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha config check``."""
    p = sub.add_parser("config", parents=[common], help="check the configuration",
                       description="Validate the configuration and say whether it will work.")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    cp = csub.add_parser("check", parents=[common], help="say whether the config works, then what it is",
                         description="The verdict first, then which sabha.yaml is used and how it was found, the "
                                     "models, the settings that differ from the defaults (secrets masked), and "
                                     "what would go wrong: a model whose API key is not exported (exit code 1), "
                                     "a secret written into the file (a warning). --verbose adds the whole "
                                     "effective config.")
    cp.set_defaults(handler=cmd_config_check)
