"""The offline model's meeting and roundtable read like a short, plausible meeting (issue 38), through the
real ``sabha meeting --quiet`` and ``sabha roundtable`` commands on a fresh ``sabha init`` board (no key):
statements are short, distinct per member and never quote a statement that itself quotes one; the
recommendation says what to do; every prediction names a checkable outcome and a date; the roundtable
answers the question asked, not the prompt's scaffolding."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from tests.support.cli import init_board, run_sabha

QUESTION = "Should we open a Pune office?"
STATEMENT = re.compile(r"^\*\*\S+ ([^:*]+):\*\* (.+)$", re.MULTILINE)
PREDICTION = re.compile(r"predicts: (.+?) \(p=[0-9.]+, by (\d{4}-\d{2}-\d{2})\)")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _quotes(speaker: str, other: str, run: int = 10) -> bool:
    """True when ``speaker`` repeats ``run`` or more consecutive words of ``other``."""
    said, theirs = " ".join(_words(speaker)), _words(other)
    return any(" ".join(theirs[i:i + run]) in said for i in range(len(theirs) - run + 1))


def _sentences(text: str) -> set[str]:
    return {s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) > 3}


def _rounds(minutes: str) -> list[list[tuple[str, str]]]:
    """(member, statement) per round, from the minutes' ``## Round n`` sections."""
    sections = re.split(r"^## Round \d+$", minutes.split("## Disagreements")[0], flags=re.MULTILINE)[1:]
    return [STATEMENT.findall(section) for section in sections]


def _no_nested_quotes(statements: list[tuple[str, str]]) -> None:
    """No statement quotes a colleague's statement that itself quotes another (a member may keep to its
    own words from round to round)."""
    for who, text in statements:
        for other, theirs in statements:
            if other == who or not _quotes(text, theirs):
                continue
            nested = [third for by, third in statements if by not in (who, other) and _quotes(theirs, third)]
            assert not nested, f"{text!r} quotes {theirs!r}, which quotes {nested[0]!r}"


@pytest.fixture(scope="module")
def minutes(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The minutes of one offline meeting on :data:`QUESTION` (``sabha meeting --quiet``)."""

    async def hold() -> str:
        folder, env = await init_board(tmp_path_factory.mktemp("offline"))
        said, _err = await run_sabha(folder, env, "meeting", "--quiet", QUESTION)
        return said

    return asyncio.run(hold())


def test_offline_statements_are_short_distinct_and_never_quote_a_quote(minutes: str) -> None:
    rounds = _rounds(minutes)
    assert len(rounds) >= 3 and all(len(r) == 5 for r in rounds), minutes
    for who, text in (s for statements in rounds for s in statements):
        assert text.count("\u201c") + text.count('"') <= 1, f"{who} quotes a quote: {text!r}"
    _no_nested_quotes([s for statements in rounds for s in statements])
    for statements in rounds:
        for who, text in statements:
            assert len(text.split()) <= 60, f"{who} is long-winded: {text!r}"
            assert "\u201c" not in text and '"' not in text, f"{who} quotes: {text!r}"
        for (who, text), (other, theirs) in ((a, b) for a in statements for b in statements if a[0] < b[0]):
            assert not _sentences(text) & _sentences(theirs), f"{who} and {other} say the same: {text!r}"


def test_the_offline_recommendation_says_what_to_do(minutes: str) -> None:
    recommendation = re.search(r"^\*\*Recommendation:\*\* (.+)$", minutes, re.MULTILINE)
    assert recommendation is not None, minutes
    said = recommendation.group(1).removeprefix("[offline] ")  # labelled: the decision travels alone
    assert "?" not in said and QUESTION.rstrip("?").lower() not in said.lower(), said
    assert "Pune office" in said and re.match(r"(Run|Open|Start|Hold|Do|Test|Try)\b", said), said


def test_every_offline_prediction_names_a_checkable_outcome_and_a_date(minutes: str) -> None:
    predictions = PREDICTION.findall(minutes)
    assert len(predictions) >= 5, minutes
    held = re.search(r"^- Held: (\d{4}-\d{2}-\d{2})", minutes, re.MULTILINE)
    assert held is not None, minutes
    for claim, by in predictions:
        assert "should we" not in claim.lower() and "Pune" in claim and "?" not in claim, claim
        assert re.search(r"\b\d+\b", claim), f"nothing to count in {claim!r}"
        assert "milestone" not in claim or "1 measurable" in claim, claim
        assert by > held.group(1), (claim, by)  # a date after the meeting, to check it on


async def test_the_offline_roundtable_answers_the_question_not_the_prompt(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    out, _err = await run_sabha(folder, env, "roundtable", QUESTION)
    result = json.loads(out)
    lines = [line for line in result["transcript"].splitlines() if not line.startswith("--- Round")]
    assert len(lines) == 9, result["transcript"]
    said = [(line.partition(": ")[0], line.partition(": ")[2]) for line in lines]
    statements = [text for _who, text in said]
    for number, text in enumerate(statements):
        assert "##" not in text and "Debate So Far" not in text and "--- Round" not in text, text
        assert "Pune office" in text or number >= 3, text  # each opens on the question asked
        assert "earlier message" not in text, text
    _no_nested_quotes(said)
    assert all("?" not in task.partition(" (Owner:")[0] for task in result["summary"]), result["summary"]
