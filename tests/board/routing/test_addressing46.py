"""Addressing by name through the real command line (issue 36, item 16, round classify46): each shape the blind3
set's writer used and the rules missed (or took wrongly), said to a real ``sabha chat`` of a fresh ``sabha init``
board, answered by the member the sentence speaks to, and the chair when it speaks to no one. The sentences are
new ones, written from the principle each rule states (:mod:`board.routing.addressing`), not the set's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SABHA = [sys.executable, "-m", "bot.cli.main"]

#: (sentence, the member who answers: the first words of its reply). One shape each, with the principle.
SPOKEN_TO = [
    ("criitc where did my plan go wrong", "🦉 Critic: "),  # a name with two letters swapped, a question after it
    ("reserch pls find three rivals in pune", "🔬 Research: "),  # a letter dropped, then a plea
    ("send the budget to finance and get it checked", "💰 Finance: "),  # something sent to a member
    ("run the hiring plan by finance before friday", "💰 Finance: "),
    ("i want research to compare two CRMs for us", "🔬 Research: "),  # the speaker's want gives work
    ("content ko bolo ek caption likhe", "📣 Content: "),  # Hinglish "tell X"
    ("oye critic, tear my pitch apart", "🦉 Critic: "),  # a greeting before a call
    ("strategy your turn", "♟️ Strategy: "),  # the turn handed over
    ("need the CFO's sign-off on this spend", "💰 Finance: "),  # a person's approval asked for
    ("long week. content write me a short bio", "📣 Content: "),  # a bare name opening a sentence, an order
    ("thoughts critic?", "🦉 Critic: "),
    ("finance?", "💰 Finance: "),  # a name alone
    ("everyone on this: strategy finance critic - weigh in", "♟️ Strategy: "),  # a roll call without commas
    ("which of you should take the launch email, content or finance?", "🧭 General: "),  # options, no call
    ("critic reviews of the film were mixed", "🧭 General: "),  # a title before a thing of its trade
    ("devil's advocate here, but do we need an app at all?", "🧭 General: "),  # the speaker's own stance
    ("🦉 owl stickers arrived for the team", "🧭 General: "),  # an emoji beside what it pictures
    ("📣 update: the office is closed on friday", "🧭 General: "),  # an emoji heading a notice
    ("I need research to back this claim in the deck", "🧭 General: "),  # a need for the thing, no order
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"} | {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    result = subprocess.run([*SABHA, "init", str(tmp_path / "proj")], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return tmp_path / "proj"


def test_a_sabha_chat_answers_with_the_member_each_sentence_speaks_to(home: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"} | {
        "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(ROOT)}  # this checkout's code
    chat = subprocess.run([*SABHA, "chat"], cwd=home, input="".join(f"{text}\n" for text, _ in SPOKEN_TO),
                          capture_output=True, text=True, timeout=300, env=env)
    assert chat.returncode == 0, chat.stderr
    lines = chat.stdout.strip().splitlines()
    answered = [next((line for line in lines if line.startswith(want) and text in line), None)
                for text, want in SPOKEN_TO]
    wrong = [f"{text!r}: want {want!r}" for (text, want), line in zip(SPOKEN_TO, answered, strict=True) if not line]
    assert not wrong, "\n".join(wrong) + "\n" + chat.stdout
