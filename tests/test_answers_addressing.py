"""Addressing by name through the real ``sabha ask --why`` (issue item 16): a role word used as an
ordinary noun ("my harshest critic") stays with the chair; a member named in the third person with
no greeting or "ask" ("how would research go about ...", "have the analyst pull ...") is the one who
answers. A ``sabha init`` board on the offline model (no key, no network); the reply's speaker on
stdout and the route on stderr."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


async def ask_why(tmp_path: Path, text: str) -> tuple[str, str]:
    """``sabha ask --why text`` in a fresh ``sabha init`` board (made once per test); (stdout, stderr)."""
    folder = tmp_path / "board"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    if not folder.exists():
        init = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "init", str(folder), env=env,
                                                    stdout=asyncio.subprocess.DEVNULL)
        assert await asyncio.wait_for(init.wait(), 120) == 0
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ask", "--why", text, cwd=folder, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


@pytest.mark.parametrize(("text", "speaker", "role"), [
    ("My harshest critic says the logo is ugly. Is it?", "🧭 General:", "general"),
    ("Who was the CFO of Theranos, and what went wrong?", "🧭 General:", "general"),
    ("How would research go about sizing the market for pet insurance?", "🔬 Research:", "research"),
    ("Have the analyst pull churn figures for meal kits.", "🔬 Research:", "research"),
    ("What does the critic think about pricing?", "🦉 Critic:", "critic"),
])
async def test_who_answers_a_role_word(tmp_path: Path, text: str, speaker: str, role: str) -> None:
    out, err = await ask_why(tmp_path, text)
    assert f"route: {role} (" in err, err
    assert out.startswith(speaker), out
