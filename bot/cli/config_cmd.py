"""``sabha config check``: which config is used, how it was found, and whether it will work.

It prints the effective config with every secret masked, then what would go wrong: a
model whose API key is not exported (an error: exit code 1, since every answer of that
model would come back degraded), a secret written into the file instead of ``${VAR}``
(a warning). Every section is checked, the channels' included. Nothing is created.
"""

from __future__ import annotations

import argparse
from typing import Any

from bot.cli.common import emit

__all__ = ["add_parsers", "cmd_config_check"]


async def cmd_config_check(args: argparse.Namespace) -> int:
    """Validate and print the effective config, secrets masked; exit 1 on a problem."""
    import yaml

    from board.workspace.souls import SoulStore
    from bot.cli.keys import key_advice, keyless_models
    from bot.config import FoundBy, load_config, masked_dump, personal_board_dir
    from bot.ops.logs import protect_config, redact

    loaded = load_config(getattr(args, "config", None), channels=True)
    protect_config(loaded.config)
    SoulStore(loaded.workspace, loaded.roster())  # validates soul paths without opening anything
    if loaded.source is None:
        emit(f"# config: none found (no sabha.yaml in {loaded.base_dir} or above, no personal board at "
             f"{personal_board_dir()}); these are the built-in defaults")
    else:
        emit(f"# config: {loaded.source} (found by {loaded.found_by.value})")
    if loaded.found_by is not FoundBy.NONE:
        emit(f"# workspace: {loaded.workspace}{'' if loaded.workspace.is_dir() else '  (missing: run sabha init)'}")
        emit(f"# data_dir: {loaded.data_dir}")
    emit(redact(yaml.safe_dump(masked_dump(loaded.config), sort_keys=False, allow_unicode=True).rstrip()))
    errors = [key_advice(loaded, model, env) for model, env in keyless_models(loaded, loaded.models())]
    for warning in loaded.warnings:
        emit(f"# warning: {warning}")
    for error in errors:
        emit(f"# error: {error}")
    if errors:
        emit(f"config has {len(errors)} problem(s): see the error lines above")
        return 1
    emit("config OK")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha config check``."""
    p = sub.add_parser("config", parents=[common], help="check the configuration",
                       description="Validate the configuration and print the effective values.")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    cp = csub.add_parser("check", parents=[common], help="validate and print the effective config (secrets masked)",
                         description="Which sabha.yaml is used and how it was found, the effective config with "
                                     "secrets masked, and what would go wrong: a model whose API key is not "
                                     "exported (exit code 1), a secret written into the file (a warning).")
    cp.set_defaults(handler=cmd_config_check)
