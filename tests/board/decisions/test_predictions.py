"""Predictions in stances (issue 27): read leniently, asked for by the meeting prompts, kept per
statement; the offline model makes them; ``sabha predictions`` and ``sabha board stats`` on the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from board.room.decision import Prediction, format_stance, parse_stance, read_prediction, split_stance
from board.room.meeting.rounds import STANCE_INSTRUCTION
from board.storage import Database, StateURL
from tests.support.daemon import REPO


@pytest.mark.parametrize(("given", "expected"), [
    ({"claim": "CAC stays under $50 through Q1", "probability": 0.7, "resolve_by": "2027-03-31"},
     ("CAC stays under $50 through Q1", 0.7, "2027-03-31")),
    ({"claim": "We sign 3 pilots", "p": "65%", "by": "31 March 2027"}, ("We sign 3 pilots", 0.65, "2027-03-31")),
    ({"statement": "Churn  falls", "chance": 40, "date": "March 31, 2027"}, ("Churn falls", 0.4, "2027-03-31")),
    ({"claim": "Launch slips", "probability": "0.2", "resolve_by": "2027-01-05T00:00:00Z"},
     ("Launch slips", 0.2, "2027-01-05")),
])
def test_a_prediction_is_read_leniently(given: dict[str, object], expected: tuple[str, float, str]) -> None:
    found, problem = read_prediction(given)
    assert problem is None and found is not None
    assert (found.claim, found.probability, found.resolve_by) == expected


@pytest.mark.parametrize(("given", "why"), [
    ({"claim": "Launch slips", "probability": 0.2, "resolve_by": "soonish"}, "lacks resolve_by"),
    ({"claim": "Launch slips", "probability": 1.7, "resolve_by": "2027-01-05"}, "lacks probability"),
    ({"probability": 0.5, "resolve_by": "2027-01-05"}, "lacks claim"),
    ("it will work", "not an object"),
])
def test_an_unreadable_prediction_is_dropped_with_the_reason(given: object, why: str) -> None:
    found, problem = read_prediction(given)
    assert found is None and problem is not None and why in problem


def test_a_stance_keeps_its_prediction_and_loses_only_a_bad_one() -> None:
    line = {"position": "support", "confidence": 0.6, "assumption": "buyers pay",
            "prediction": {"claim": "CAC stays under $50 through Q1", "probability": "70%", "resolve_by": "2027-03-31"}}
    body, stance, problem = split_stance("We should.\nSTANCE: " + json.dumps(line))
    assert body == "We should." and problem is None and stance is not None
    assert stance.prediction == Prediction(claim="CAC stays under $50 through Q1", probability=0.7,
                                           resolve_by="2027-03-31")
    assert "predicts: CAC stays under $50 through Q1 (p=0.70, by 2027-03-31)" in format_stance(stance)
    line["prediction"] = {"claim": "CAC stays low", "probability": 0.7, "resolve_by": "someday"}
    _, kept, _ = split_stance("We should.\nSTANCE: " + json.dumps(line))
    assert kept is not None and kept.position == "support" and kept.prediction is None
    loose = parse_stance("oppose, confidence 0.8, assumption: buyers balk; prediction: churn rises above 5%, "
                         "p=0.6, by 2027-02-01")
    assert (loose.assumption, loose.prediction) == ("buyers balk", Prediction(
        claim="churn rises above 5%", probability=0.6, resolve_by="2027-02-01"))


def test_the_meeting_asks_for_a_checkable_prediction() -> None:
    assert '"prediction": {"claim"' in STANCE_INSTRUCTION and "resolve_by" in STANCE_INSTRUCTION
    assert "leave it out when nothing is checkable" in STANCE_INSTRUCTION


def _sabha(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args, "--config", str(root / "sabha.yaml")],
                          capture_output=True, text=True, cwd=root, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"},
                          timeout=120, check=False)


@pytest.mark.backends
def test_the_offline_board_predicts_and_the_cli_lists_resolves_and_scores(tmp_path: Path,
                                                                          state_url: StateURL | None) -> None:
    """``sabha meeting`` on the offline model: every member's stance carries a prediction to check on
    the meeting's date; ``sabha predictions list|resolve`` and ``sabha board stats`` work on them."""
    assert _sabha(tmp_path, "init", str(tmp_path)).returncode == 0
    if state_url is not None:  # the board's state on the test's PostgreSQL
        with (tmp_path / "sabha.yaml").open("a") as config:
            config.write(f"\nstate:\n  url: {state_url}\n")
    before = _sabha(tmp_path, "board", "stats")
    assert before.returncode == 0 and "no predictions yet" in before.stdout.lower()  # no state yet, or none in it
    held = _sabha(tmp_path, "meeting", "--quiet", "Should we raise prices for European customers?")
    assert held.returncode == 0, held.stderr
    listed = _sabha(tmp_path, "predictions", "list")
    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stdout.splitlines() if line.startswith("#")]
    assert len(lines) == 5, listed.stdout
    assert all("the pilot to raise prices for European customers" in line for line in lines), listed.stdout
    number = lines[0].split()[0].lstrip("#")
    done = _sabha(tmp_path, "predictions", "resolve", number, "yes")
    assert done.returncode == 0 and "Recorded" in done.stdout and "came true" in done.stdout
    again = _sabha(tmp_path, "predictions", "resolve", number, "no")
    assert again.returncode == 2 and "already resolved" in again.stderr
    bad = _sabha(tmp_path, "predictions", "resolve", number, "soonish")
    assert bad.returncode == 2 and "not an outcome" in bad.stderr and "sabha predictions resolve" in bad.stderr
    stats = _sabha(tmp_path, "board", "stats")
    assert stats.returncode == 0 and "too few resolved predictions (n=1)" in stats.stdout, stats.stdout
    assert "```" not in stats.stdout


@pytest.mark.backends
async def test_a_prediction_about_the_past_is_not_recorded_and_a_restated_one_counts_once(database: Database) -> None:
    from datetime import UTC, datetime

    from board.decisions.predictions.recording import record_prediction
    from board.decisions.predictions.store import PredictionStore
    from board.room.decision import Stance

    now = datetime(2026, 11, 25, 9, tzinfo=UTC)
    async with database as db:
        await db.execute("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                         "VALUES ('m-1', 'Prices', 'board', 'general', 'running', '2026-11-25')")

        def stance(claim: str, p: float, by: str) -> Stance:
            return Stance(position="support", confidence=0.6, assumption="it pays",
                          prediction=Prediction(claim=claim, probability=p, resolve_by=by))

        assert await record_prediction(db, "m-1", 1, "finance", stance("Churn fell", 0.7, "2026-11-01"),
                                       model="m", now=now) is None
        first = await record_prediction(db, "m-1", 1, "finance", stance("CAC stays under $50", 0.6, "2027-03-31"),
                                        model="m", now=now)
        again = await record_prediction(db, "m-1", 2, "finance", stance("cac stays  under $50.", 0.8, "2027-03-31"),
                                        model="m2", now=now)
        rows = await PredictionStore(db).query(status="all")
        assert first == again and len(rows) == 1
        assert (rows[0].round, rows[0].probability, rows[0].model) == (2, 0.8, "m2")  # the later statement's
