"""Helpers for the consultation and meeting suites: a board on the scripted model with
meeting/consultation settings of the test's choosing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from board.agent.runner import AgentSettings
from board.llm.base import LLMRequest
from board.roles import RosterSpec
from board.room.consult import ConsultSettings
from board.room.decision import decision_schema
from board.room.meeting import MeetingSettings
from board.service import Board, BoardSettings
from tests.fakes.scripted_model import ScriptedModel
from tests.llm_support import FAST_RETRY


async def board_with(workspace: Path, data_dir: Path, model: ScriptedModel, *, meetings: MeetingSettings | None = None,
                     consultation: ConsultSettings | None = None,
                     custom_rosters: dict[str, list[str]] | None = None, **agent: Any) -> Board:
    """An open board whose every role talks to ``model``."""
    agent.setdefault("default_model", f"{model.name}:main")
    agent.setdefault("retry", FAST_RETRY)
    settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(), agent=AgentSettings(**agent),
        meetings=meetings or MeetingSettings(), consultation=consultation or ConsultSettings(),
        custom_rosters=tuple((name, tuple(roles)) for name, roles in (custom_rosters or {}).items()),
    )
    return await Board.open(settings, model.registry())


def last_user(request: LLMRequest) -> str:
    """The text of the last user message."""
    return next((m.content for m in reversed(request.messages) if m.role == "user"), "")


def schema_of(request: LLMRequest) -> dict[str, Any] | None:
    """The JSON schema the request asks for, if any."""
    schema = request.metadata.get("response_schema")
    return schema if isinstance(schema, dict) else None


def valid_decision(owners: list[str], *, dissent: list[dict[str, str]] | None = None) -> str:
    """A decision that passes validation."""
    assert decision_schema(owners)
    return json.dumps({
        "recommendation": "Pilot in Germany first",
        "rationale": "Smallest bet that tests demand",
        "consensus_points": ["Start small"],
        "dissent": dissent or [],
        "action_items": [{"task": f"Next step for {owner}", "owner": owner} for owner in owners[:3]],
        "open_questions": ["Which city?"],
    })


def framing(roles: list[str]) -> str:
    """A chair's framing answer."""
    return json.dumps({"agenda": "1. Market\n2. Money\n3. Risks",
                       "questions": {role: f"Question for {role}?" for role in roles}})
