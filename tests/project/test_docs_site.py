"""The docs site: it builds with ``mkdocs build --strict`` (no broken link or anchor, every page in the nav), the
README's links into it land on a page and an anchor that exist, and its generated parts are complete.

The strict build needs mkdocs and mkdocs-material (``.[docs]``, which ``.[test]`` includes): missing, the test
skips on a developer's machine and FAILS on CI (tests/support/ci.py), like the other tests of a real part.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import yaml

from tests.support.ci import missing_part

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / "docs" / "hooks"
_README_LINK = re.compile(r"\]\(docs/([^)#\s]+)(?:#([^)\s]+))?\)")


def hook(name: str) -> ModuleType:
    """A docs hook module, loaded from its file as MkDocs loads it."""
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def built_site(site: Path) -> Path:
    """``mkdocs build --strict`` of this checkout into ``site``; fails with mkdocs' own warnings."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        missing_part("mkdocs and mkdocs-material are not installed: pip install -e '.[docs]' (make test does)")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site),
         "--config-file", str(REPO / "mkdocs.yml")],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return site


def test_the_site_builds_strictly_and_the_readme_links_land(tmp_path: Path) -> None:
    site = built_site(tmp_path / "site")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = _README_LINK.findall(readme)
    assert len(links) >= 9, links  # one per docs page at least
    for page, anchor in links:
        if not page.endswith(".md"):
            assert (REPO / "docs" / page).is_file(), page
            continue
        html = site / ("" if page == "index.md" else page.removesuffix(".md")) / "index.html"
        assert html.is_file(), f"README links docs/{page}, which the site does not have"
        if anchor:
            assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), f"docs/{page} has no anchor #{anchor}"
    reference = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "board.meetings.budget_usd" in reference and "config-reference" not in reference
    development = (site / "development" / "index.html").read_text(encoding="utf-8")
    assert "board/" in development and "source-tree" not in development


def test_the_config_reference_lists_every_key_the_example_config_has() -> None:
    """The reference is written from the config models; config.example.yaml is written by hand. Every key the
    example shows is in the reference (a key that mapping names stand for, like ``board.agents.<role>``, by its
    mapping's path)."""
    reference = hook("config_reference")
    listed: set[str] = set()
    for key in reference.config_keys():
        parts = key.path.split(".")
        listed.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))

    def walk(mapping: dict[str, object], prefix: str = "") -> list[str]:
        found = []
        for name, value in mapping.items():
            found.append(f"{prefix}{name}")
            if isinstance(value, dict):
                found += walk(value, f"{prefix}{name}.")
        return found

    example = walk(yaml.safe_load((REPO / "config.example.yaml").read_text(encoding="utf-8")))
    assert len(example) > 100, example
    assert [path for path in example if path not in listed] == []
    table = reference.reference()
    assert "| `board.meetings.budget_usd` | float | 1.0 |" in table, table[:2000]
    assert "| `llm.model` | str | offline |" in table


def test_the_source_tree_shows_every_package() -> None:
    tree = hook("source_tree").tree()
    for package in ("board", "bot"):
        for init in (REPO / package).rglob("__init__.py"):
            if "migrations" not in init.parts:
                assert f"{init.parent.name}/" in tree, init
