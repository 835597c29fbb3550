"""Soul front matter is read without pydantic when it is plain, and as pydantic reads it otherwise.

``board.workspace.souls.front_matter`` must agree with the pydantic model on everything: the
same values for what both accept, the pydantic verdict (and wording) for the rest.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from board.workspace.files import FileProblem
from board.workspace.souls import SoulMeta, _pydantic_meta, front_matter, parse_soul

REPO = Path(__file__).resolve().parents[3]

CASES: list[dict[Any, Any]] = [
    {},
    {"name": "Grumpy", "emoji": "😾", "title": "", "model": "openai:x"},
    {"temperature": 0}, {"temperature": 2}, {"temperature": 0.7}, {"temperature": None},
    {"tools": "recall, remember ,"}, {"tools": ["recall"]}, {"tools": []}, {"tools": None},
    {"consults": "finance,critic"}, {"consults": ["finance"]},
    # not plain: pydantic decides
    {"temperature": "0.5"}, {"temperature": 3}, {"temperature": -1}, {"temperature": True}, {"temperature": "hot"},
    {"temperature": float("nan")}, {"name": 12}, {"tools": [1, 2]}, {"tools": {"a": 1}}, {"consults": None},
    {"colour": "red"}, {1: "x"}, {"name": ["a"]},
]


@pytest.mark.parametrize("loaded", CASES, ids=repr)
def test_front_matter_agrees_with_the_pydantic_model(loaded: dict[Any, Any]) -> None:
    from pydantic import ValidationError

    try:
        expected: SoulMeta | None = SoulMeta(**_pydantic_meta().model_validate(loaded).model_dump())
    except ValidationError:
        expected = None
    if expected is None:
        with pytest.raises(FileProblem, match="bad front matter"):
            front_matter(loaded, "soul")
    else:
        assert front_matter(loaded, "soul") == expected


def test_a_bad_key_is_named_with_the_allowed_ones() -> None:
    with pytest.raises(FileProblem) as err:
        parse_soul(b"---\ncolour: red\n---\nYou are calm.\n")
    assert "colour: Extra inputs are not permitted" in str(err.value)
    assert "allowed keys: name, title, emoji, model, temperature, tools, consults" in str(err.value)


def test_reading_the_shipped_souls_imports_no_pydantic(tmp_path: Path) -> None:
    probe = ("import sys\nfrom board.workspace.paths import default_workspace_dir\n"
             "from board.workspace.souls import parse_soul\n"
             "for f in default_workspace_dir().rglob('*.soul.md'): parse_soul(f.read_bytes())\n"
             "print('pydantic' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "False"
