"""The Slack page and the package agree with the code: docs/slack.md's set-up steps name every bot scope of the
manifest, and the modules the package's docstring says import ``slack_sdk`` are the ones that do."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import bot.channels.slack
from bot.channels.slack.manifest import BOT_SCOPES

REPO = Path(__file__).resolve().parents[4]
PACKAGE = REPO / "bot" / "channels" / "slack"


def test_the_set_up_steps_name_every_scope_of_the_manifest() -> None:
    page = (REPO / "docs" / "slack.md").read_text(encoding="utf-8")
    steps = page.split("2. **Scopes.**", 1)[1].split("3. **Install**", 1)[0]
    named = set(re.findall(r"`([a-z_]+(?::[a-z_]+)?)`", steps))
    assert set(BOT_SCOPES) <= named, f"step 2 of docs/slack.md lacks {sorted(set(BOT_SCOPES) - named)}"
    table = page.split("| Scope |", 1)[1].split("\n\n", 1)[0]
    assert set(BOT_SCOPES) <= set(re.findall(r"`([a-z_]+(?::[a-z_]+)?)`", table))


def _imports_slack(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(n.split(".")[0] in ("slack_sdk", "slack_bolt") for n in names):
            return True
    return False


def test_the_package_docstring_names_the_modules_that_import_slack_sdk() -> None:
    doc = bot.channels.slack.__doc__ or ""
    said = doc.split("``slack_sdk`` is imported by", 1)[1].split(")", 1)[0]
    named = set(re.findall(r":mod:`\.(\w+)`", said))
    importing = {p.stem for p in PACKAGE.glob("*.py") if _imports_slack(p)}
    assert importing == named, (importing, named)
