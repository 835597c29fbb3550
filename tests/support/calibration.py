"""Helpers for the prediction and calibration suites: a board on the scripted model and a fake
clock whose members state scripted predictions in real meetings, and the scripted set of 20
predictions with its hand-computed Brier score and reliability table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.clock import FakeClock
from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.roles import RosterSpec
from board.room.consult import ConsultSettings
from board.room.meeting import MeetingSettings
from tests.support.board import last_user, open_board, structured_answer, valid_decision
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.llm import FAST_RETRY

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
OWNERS = ["general", *SPECIALISTS]
#: the seeding meetings' time: every prediction's resolve-by date is after it
T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
RESOLVE_BY = "2026-12-01"
ROUNDS = 4


@dataclass(frozen=True)
class Scripted:
    """One scripted prediction: who, the claim, the stated probability and how it turned out
    (``yes`` / ``no`` / ``unknown``; None: left open)."""

    role: str
    claim: str
    p: float
    outcome: str | None


#: finance's 20 predictions: 18 resolved yes/no, 2 can't tell (bins 0.0-0.1 ... 0.9-1.0, edges 0.0, 0.7, 1.0)
FINANCE: tuple[tuple[float, str], ...] = (
    (0.00, "no"), (0.15, "no"), (0.15, "yes"), (0.25, "no"), (0.35, "no"), (0.35, "yes"), (0.45, "yes"),
    (0.55, "yes"), (0.55, "no"), (0.65, "yes"), (0.65, "yes"), (0.65, "no"), (0.70, "yes"), (0.75, "yes"),
    (0.85, "yes"), (0.85, "yes"), (1.00, "yes"), (0.95, "no"), (0.70, "unknown"), (0.30, "unknown"),
)
#: the critic's 4: three resolved (too few for a score), one left open
CRITIC: tuple[tuple[float, str | None], ...] = ((0.2, "no"), (0.4, "yes"), (0.9, "no"), (0.6, None))

# The hand computation (squared errors of finance's 18 yes/no predictions):
#   0.00 no  0.0000 | 0.15 no  0.0225 | 0.15 yes 0.7225 | 0.25 no  0.0625 | 0.35 no  0.1225 | 0.35 yes 0.4225
#   0.45 yes 0.3025 | 0.55 yes 0.2025 | 0.55 no  0.3025 | 0.65 yes 0.1225 | 0.65 yes 0.1225 | 0.65 no  0.4225
#   0.70 yes 0.0900 | 0.75 yes 0.0625 | 0.85 yes 0.0225 | 0.85 yes 0.0225 | 1.00 yes 0.0000 | 0.95 no  0.9025
#   sum 3.9275, n 18: Brier 3.9275 / 18 = 0.2181944...
HAND_BRIER = 3.9275 / 18
#: (bin low, count, mean stated p, observed frequency), by hand
HAND_BINS: tuple[tuple[float, int, float, float], ...] = (
    (0.0, 1, 0.00, 0 / 1),
    (0.1, 2, 0.15, 1 / 2),
    (0.2, 1, 0.25, 0 / 1),
    (0.3, 2, 0.35, 1 / 2),
    (0.4, 1, 0.45, 1 / 1),
    (0.5, 2, 0.55, 1 / 2),
    (0.6, 3, 0.65, 2 / 3),
    (0.7, 2, 0.725, 2 / 2),  # 0.70 and 0.75
    (0.8, 2, 0.85, 2 / 2),
    (0.9, 2, 0.975, 1 / 2),  # 0.95 and 1.00
)
#: how ``/stats`` prints them (the table's own format, from the numbers above)
HAND_LINES = (
    "- finance: Brier 0.218 over 18 resolved (2 can't tell, 0 open)",
    "  0.0-0.1        1   0.000      0.000",
    "  0.1-0.2        2   0.150      0.500",
    "  0.2-0.3        1   0.250      0.000",
    "  0.3-0.4        2   0.350      0.500",
    "  0.4-0.5        1   0.450      1.000",
    "  0.5-0.6        2   0.550      0.500",
    "  0.6-0.7        3   0.650      0.667",
    "  0.7-0.8        2   0.725      1.000",
    "  0.8-0.9        2   0.850      1.000",
    "  0.9-1.0        2   0.975      0.500",
    "- critic: too few resolved predictions (n=3); a score needs 5; 0 can't tell, 1 open",
)


def scripted() -> list[Scripted]:
    """All 24 scripted predictions: finance's 20 (claims F01..F20), the critic's 4 (C01..C04)."""
    return ([Scripted("finance", f"F{i:02d} the metric lands", p, o) for i, (p, o) in enumerate(FINANCE, 1)]
            + [Scripted("critic", f"C{i:02d} the risk shows", p, o) for i, (p, o) in enumerate(CRITIC, 1)])


def _by_turn(predictions: Sequence[Scripted]) -> dict[tuple[str, int], Scripted]:
    """(role, n-th statement of that role overall) -> the prediction it states."""
    out: dict[tuple[str, int], Scripted] = {}
    for role in ("finance", "critic"):
        for n, item in enumerate([p for p in predictions if p.role == role]):
            out[(role, n)] = item
    return out


def predicting_model(predictions: Sequence[Scripted]) -> ScriptedModel:
    """A scripted board: finance and the critic state one scripted prediction per statement, in order;
    everyone's stance is conditional (so meetings run every round)."""
    turns = _by_turn(predictions)
    spoken: dict[str, int] = {}

    def answer(request: LLMRequest) -> Step:
        role, text = request.persona.role, last_user(request)
        stance: dict[str, Any] = {"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold"}
        structured = structured_answer(request, SPECIALISTS, stance=stance, decide=lambda: valid_decision(OWNERS))
        if structured is not None:
            return structured
        if "draft decision" in text:
            return say("NO OBJECTION")
        if text.startswith("Board meeting on"):
            n = spoken.get(role, 0)
            spoken[role] = n + 1
            item = turns.get((role, n))
            if item is not None:
                stance["prediction"] = {"claim": item.claim, "probability": item.p, "resolve_by": RESOLVE_BY}
            return say(f"{role} speaks.\nSTANCE: {json.dumps(stance)}")
        return say(f"{role} answers: {text[-60:]}")

    return ScriptedModel(default=answer)


async def predicting_board(workspace: Path, data_dir: Path, model: ScriptedModel, clock: FakeClock,
                           **meetings: Any) -> Board:
    """An open board on ``model`` and ``clock``, meetings of :data:`ROUNDS` rounds."""
    meetings.setdefault("max_turns_per_agent", ROUNDS)
    settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
        agent=AgentSettings(default_model=f"{model.name}:main", retry=FAST_RETRY),
        meetings=MeetingSettings(**meetings), consultation=ConsultSettings(),
    )
    return await open_board(settings, model.registry(), clock=clock)


async def hold_meetings(board: Board, count: int, place: Envelope) -> list[str]:
    """Hold ``count`` meetings started from ``place``; their ids."""
    ids = []
    for n in range(count):
        run = board.parts.room.prepare(f"Pricing plan number {n + 1}", envelope=place)
        result = await run.run()
        ids.append(result.meeting_id)
    return ids


async def ids_by_claim(board: Board) -> dict[str, int]:
    """Each stored prediction's number, by its claim."""
    rows = await board.parts.db.fetchall("SELECT id, claim FROM predictions")
    return {r["claim"]: int(r["id"]) for r in rows}


async def seed(workspace: Path, data_dir: Path, place: Envelope) -> dict[str, int]:
    """Hold the meetings in which the 24 scripted predictions are made (by the real meeting code, on a
    board at :data:`T0`); the predictions' numbers by claim."""
    board = await predicting_board(workspace, data_dir, predicting_model(scripted()), FakeClock(T0))
    try:
        await hold_meetings(board, 5, place)  # finance speaks 4 times a meeting: 20 statements
        return await ids_by_claim(board)
    finally:
        await board.close()
