"""The newcomer's two commands: ``make run`` installs only what running needs, ``make test`` the test tools.

Checked with ``make -n`` (what make would run) on a copy of the Makefile, never by installing:
the commands make prints are the ones it would run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


#: the test command: in parallel (4 workers unless PYTEST_XDIST_AUTO_NUM_WORKERS says), xdist groups on one worker
PYTEST = "python -m pytest -q -n auto --maxprocesses 4 --dist loadgroup"


def planned(folder: Path, target: str) -> list[str]:
    """The commands ``make <target>`` would run in ``folder``, one per line."""
    # as a newcomer runs it: not as a sub-make of `make test` (whose MAKELEVEL / MAKEFLAGS make a
    # child print "Entering directory" lines around its plan)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    done = subprocess.run(["make", "--no-print-directory", "-n", target], cwd=folder, capture_output=True,
                          text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copyfile(REPO / name, tmp_path / name)
    return tmp_path


def installs(lines: list[str]) -> list[str]:
    return [line for line in lines if "pip install" in line and "--upgrade pip" not in line]


def test_make_run_installs_sabha_without_the_test_tools(clone: Path) -> None:
    lines = planned(clone, "run")
    assert any("-m venv .venv" in line for line in lines), lines
    assert [line.split()[-1] for line in installs(lines)] == ["."], lines  # pip install -e . only
    assert any("sabha init ." in line for line in lines) and lines[-1].endswith("sabha chat"), lines


def test_make_test_adds_the_test_tools_to_the_venv_make_run_made(clone: Path) -> None:
    fresh = planned(clone, "test")  # a fresh clone: the venv, Sabha, then the test tools
    assert [line.split()[-1] for line in installs(fresh)] == [".", "'.[test]'"], fresh
    assert fresh[-1].endswith(PYTEST), fresh

    (clone / ".venv" / "bin").mkdir(parents=True)
    (clone / ".venv" / "bin" / ".installed").touch()  # what `make run` leaves
    after_run = planned(clone, "test")
    assert not any("-m venv" in line for line in after_run), after_run
    assert [line.split()[-1] for line in installs(after_run)] == ["'.[test]'"], after_run

    (clone / ".venv" / "bin" / ".installed-test").touch()  # the second `make test` installs nothing
    assert installs(planned(clone, "test")) == []
    assert installs(planned(clone, "run")) == []  # and `make run` does not undo it


def test_the_parallel_test_command_gets_its_plugin_from_the_test_extras() -> None:
    """``-n`` / ``--dist`` are pytest-xdist's options: without it in ``.[test]`` a fresh clone's
    ``make test`` would stop at a usage error."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(req.replace(" ", "").startswith("pytest-xdist") for req in extras["test"]), extras["test"]
