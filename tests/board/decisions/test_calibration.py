"""Calibration (issue 27): the Brier score and the reliability table, computed exactly on a scripted set
of 20 predictions made in real meetings and resolved with ``/resolve``, checked against a hand
computation (tests/support/calibration.py); the minimum before a score; the pure scoring rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from board.app import Board
from board.decisions.predictions.scoring import bin_index, brier, reliability, track_records
from board.decisions.predictions.store import Outcome, PredictionStore
from board.envelope import Envelope
from tests.support.board import on_both_backends
from tests.support.calibration import HAND_BINS, HAND_BRIER, HAND_LINES, scripted, seed

OWNER_DM = Envelope(channel="telegram", text="", sender="42", chat_id="42", is_owner=True)


async def _resolve_all(workspace: Path, data_dir: Path) -> tuple[list[str], PredictionStore, Board]:
    from board.clock import FakeClock
    from tests.support.calibration import T0, predicting_board, predicting_model

    ids = await seed(workspace, data_dir, OWNER_DM)
    board = await predicting_board(workspace, data_dir, predicting_model([]), FakeClock(T0))
    answers = []
    for item in scripted():
        if item.outcome is not None:
            reply = await board.handle(Envelope(channel="telegram", text=f"/resolve {ids[item.claim]} {item.outcome}",
                                                sender="42", chat_id="42", is_owner=True))
            answers.append(reply.text)
    return answers, PredictionStore(board.parts.db), board


@on_both_backends
async def test_brier_and_reliability_of_twenty_scripted_predictions_match_the_hand_computation(
    workspace: Path, data_dir: Path
) -> None:
    answers, store, board = await _resolve_all(workspace, data_dir)
    try:
        assert all(a.startswith("Recorded: #") for a in answers), answers
        rows = await store.query(status="all")
        assert len([r for r in rows if r.role == "finance"]) == 20
        records = {r.role: r for r in track_records(rows, min_resolved=5)}
        finance = records["finance"]
        assert (finance.n, finance.unknown, finance.open) == (18, 2, 0)
        assert finance.brier == pytest.approx(HAND_BRIER, abs=1e-12)
        got = [(b.low, b.count, b.mean_p, b.observed) for b in finance.bins]
        assert len(got) == len(HAND_BINS)
        for (low, count, mean_p, observed), hand in zip(got, HAND_BINS, strict=True):
            assert low == pytest.approx(hand[0]) and count == hand[1]
            assert mean_p == pytest.approx(hand[2], abs=1e-12) and observed == pytest.approx(hand[3], abs=1e-12)
        critic = records["critic"]
        assert (critic.n, critic.brier, critic.bins) == (3, None, ())  # under the minimum: no score
        stats = await board.handle(Envelope(channel="telegram", text="/stats", sender="42", chat_id="42",
                                            is_owner=True))
        for line in HAND_LINES:
            assert line in stats.text.splitlines(), f"{line!r} not in:\n{stats.text}"
        assert "finance" in stats.text.split("critic")[0]  # the scored advisor first
    finally:
        await board.close()


@on_both_backends
async def test_each_prediction_keeps_its_advisor_meeting_model_and_round(workspace: Path, data_dir: Path) -> None:
    from board.clock import FakeClock
    from tests.support.calibration import T0, predicting_board, predicting_model

    ids = await seed(workspace, data_dir, OWNER_DM)
    board = await predicting_board(workspace, data_dir, predicting_model([]), FakeClock(T0))
    try:
        rows = {r.claim: r for r in await PredictionStore(board.parts.db).query(status="all")}
        assert set(rows) == {s.claim for s in scripted()} and len(ids) == 24
        first = rows["F01 the metric lands"]
        assert (first.role, first.round, first.model, first.probability, first.resolve_by) == (
            "finance", 1, "scripted:main", 0.0, "2026-12-01")
        assert rows["F05 the metric lands"].meeting_id != first.meeting_id  # the second meeting's first round
        assert (first.channel, first.chat_id) == ("telegram", "42")
        statements = await board.parts.db.fetchall(
            "SELECT stance FROM meeting_statements WHERE meeting_id = ? AND role = 'finance' ORDER BY round",
            (first.meeting_id,))
        assert '"claim": "F01 the metric lands"' in statements[0]["stance"]  # the stance keeps it too
    finally:
        await board.close()


@on_both_backends
async def test_resolving_twice_unknown_numbers_bad_outcomes_and_other_chats_change_nothing(
    workspace: Path, data_dir: Path
) -> None:
    from board.clock import FakeClock
    from tests.support.calibration import T0, predicting_board, predicting_model

    ids = await seed(workspace, data_dir, OWNER_DM)
    board = await predicting_board(workspace, data_dir, predicting_model([]), FakeClock(T0))
    n = ids["F01 the metric lands"]

    async def say(text: str, **who: object) -> str:
        envelope = Envelope(channel="telegram", text=text, sender=str(who.get("sender", "42")),
                            chat_id=str(who.get("chat", "42")), is_owner=bool(who.get("owner", True)))
        return (await board.handle(envelope)).text

    try:
        assert "Recorded" in await say(f"/resolve {n} yes")
        again = await say(f"/resolve {n} no")
        assert f"Prediction #{n} was already resolved: came true" in again and "Nothing changed" in again
        assert "No prediction #999" in await say("/resolve 999 yes")
        assert "'soonish' is not an outcome" in await say(f"/resolve {n + 1} soonish")
        assert "/resolve <n> yes|no|unknown" in await say("/resolve")
        assert "owner" in await say(f"/resolve {n + 1} yes", sender="43", chat="43", owner=False)
        row = await PredictionStore(board.parts.db).get(n)
        other = await PredictionStore(board.parts.db).get(n + 1)
        assert row is not None and row.outcome is Outcome.YES and row.resolved_by == "42"
        assert other is not None and other.outcome is None
        # resolved first, its resolution request is cancelled; the other's still waits
        first = await board.parts.schedule.get(f"resolution:prediction:{n}")
        second = await board.parts.schedule.get(f"resolution:prediction:{n + 1}")
        assert first is not None and first.status == "cancelled"
        assert second is not None and second.status == "pending"
    finally:
        await board.close()


def test_bins_put_the_edges_where_a_person_expects() -> None:
    edges = (0.0, 0.0999, 0.1, 0.3, 0.7, 0.7000001, 0.9, 0.99, 1.0)
    assert [bin_index(p) for p in edges] == [0, 0, 1, 3, 7, 7, 9, 9, 9]


def test_brier_excludes_cant_tell_and_is_none_without_yes_or_no() -> None:
    assert brier([(0.8, Outcome.YES), (0.8, Outcome.NO), (0.5, Outcome.UNKNOWN)]) == pytest.approx((0.04 + 0.64) / 2)
    assert brier([(0.5, Outcome.UNKNOWN)]) is None
    assert reliability([(0.5, Outcome.UNKNOWN)]) == []
    perfect = [(1.0, Outcome.YES), (0.0, Outcome.NO)]
    assert brier(perfect) == 0.0 and brier([(0.5, Outcome.YES), (0.5, Outcome.NO)]) == 0.25
