"""Every file or folder of the repository the README and the docs pages name (``bot/intake/``,
``tests/project/test_makefile.py``, ``benchmarks/burst.py``, ``systemd/sabha.service`` ...) exists: a module, test or
script that moves takes its mention along.

A path counts when it starts with one of the repository's top folders and is not part of a longer path
(``/etc/systemd/system/`` and ``my-workspace/board/`` are not the repository's). Placeholders (``benchmarks/<name>.py``)
and the few paths a reader makes (:data:`MADE_BY_YOU`) are left out.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
_PATH = re.compile(r"(?<![\w./~-])(?:board|bot|tests|benchmarks|systemd|docs|workspace|notes)/[\w./-]*")
#: Paths the docs tell a reader to create (a knowledge folder, a new soul), not files of the repository.
MADE_BY_YOU = ("workspace/knowledge", "board/legal.soul.md")


def test_every_repository_path_the_docs_name_exists() -> None:
    missing = []
    for doc in DOC_FILES:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in _PATH.finditer(line):
                path = match.group(0).rstrip(".")
                if line[match.end():match.end() + 1] == "<" or path.startswith(MADE_BY_YOU):
                    continue
                if not (REPO / path).exists():
                    missing.append(f"{doc.relative_to(REPO)}:{number}: {path}")
    assert not missing, "the docs name paths the repository does not have:\n" + "\n".join(missing)
