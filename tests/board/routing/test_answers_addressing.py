"""Addressing by name through the real ``sabha ask --why`` (issue item 16): a role word used as an
ordinary noun ("my harshest critic") stays with the chair; a member named in the third person with
no greeting or "ask" ("how would research go about ...", "have the analyst pull ...") is the one who
answers. A ``sabha init`` board on the offline model (no key, no network); the reply's speaker on
stdout and the route on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import init_board, run_sabha


async def ask_why(tmp_path: Path, text: str) -> tuple[str, str]:
    """``sabha ask --why text`` in a fresh ``sabha init`` board (made once per test); (stdout, stderr)."""
    folder, env = await init_board(tmp_path)
    return await run_sabha(folder, env, "ask", "--why", text)


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


#: Sentences of the blind set (tests/data/addressing_blind.jsonl, written by someone who had read neither the rules
#: nor the other sets) the pattern rules left with the chair: a member called with no comma, an emoji inside the
#: sentence. The learned model beside the rules (board/routing/address_model.py) reads them as calls.
@pytest.mark.parametrize(("text", "speaker", "role"), [
    ("running numbers on the food truck. Finance what do u think of 12$ per burrito", "💰 Finance:", "finance"),
    ("content pls rewrite our about page, it sounds like a robot wrote it", "📣 Content:", "content"),
    ("yo 💰 is it smarter to lease or buy the van", "💰 Finance:", "finance"),
    ("Finance pls check: rent 2.4k, payroll 9k, rev 14k. are we ok", "💰 Finance:", "finance"),
])
async def test_who_answers_a_sentence_written_apart_from_the_rules(tmp_path: Path, text: str, speaker: str,
                                                                   role: str) -> None:
    out, err = await ask_why(tmp_path, text)
    assert f"route: {role} (" in err, err
    assert out.startswith(speaker), out
