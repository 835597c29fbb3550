"""Helpers for the consultation and meeting suites: a board on the scripted model with
meeting/consultation settings of the test's choosing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.llm.base import LLMRequest
from board.llm.registry import ProviderRegistry
from board.roles import RosterSpec
from board.room.consult import ConsultSettings
from board.room.decision import decision_schema
from board.room.meeting import MeetingSettings
from board.storage import StateURL
from bot.app import all_migrations
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.llm import FAST_RETRY

T = TypeVar("T")

def on_both_backends(test: T) -> T:
    """Mark ``test`` to run on SQLite and PostgreSQL with the boards it builds (:func:`board_with`,
    :func:`open_board`) on the backend of the run."""
    return pytest.mark.backends(pytest.mark.usefixtures("boards_on_backend")(test))  # type: ignore[no-any-return]


#: Where :func:`board_with` keeps a board's state when the test does not say: set to the test's
#: ``state_url`` by the ``boards_on_backend`` fixture (tests/conftest.py); None: SQLite in ``data_dir``.
STATE: StateURL | None = None


async def board_with(workspace: Path, data_dir: Path, model: ScriptedModel, *, meetings: MeetingSettings | None = None,
                     consultation: ConsultSettings | None = None,
                     custom_rosters: dict[str, list[str]] | None = None, state: StateURL | None = None,
                     **agent: Any) -> Board:
    """An open board whose every role talks to ``model`` (its state on ``state``, else on :data:`STATE`:
    the test's backend with the ``boards_on_backend`` fixture; None: SQLite in ``data_dir``)."""
    agent.setdefault("default_model", f"{model.name}:main")
    agent.setdefault("retry", FAST_RETRY)
    settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(), agent=AgentSettings(**agent),
        meetings=meetings or MeetingSettings(), consultation=consultation or ConsultSettings(),
        custom_rosters=tuple((name, tuple(roles)) for name, roles in (custom_rosters or {}).items()),
        state=state,
    )
    return await open_board(settings, model.registry())


async def open_board(settings: BoardSettings, providers: ProviderRegistry | None = None, **kwargs: Any) -> Board:
    """``Board.open(settings, ...)`` on :data:`STATE` (the test's backend) unless ``settings`` names a state."""
    state = settings.state if settings.state is not None else STATE
    if state is None:
        return await Board.open(settings, providers, **kwargs)
    return await Board.open(dataclasses.replace(settings, state=state), providers,
                            migrations=all_migrations(), **kwargs)


def last_user(request: LLMRequest) -> str:
    """The text of the last user message."""
    return next((m.content for m in reversed(request.messages) if m.role == "user"), "")


def schema_of(request: LLMRequest) -> dict[str, Any] | None:
    """The JSON schema the request asks for, if any."""
    schema = request.metadata.get("response_schema")
    return schema if isinstance(schema, dict) else None


def decision_record(recommendation: str, rationale: str, items: list[tuple[str, str]], *,
                    dissent: list[dict[str, str]] | None = None, **extra: Any) -> dict[str, Any]:
    """A decision: its consensus "Start small", its open question "Which city?", ``items`` as (task, owner)."""
    return {
        "recommendation": recommendation,
        "rationale": rationale,
        "consensus_points": ["Start small"],
        "dissent": dissent or [],
        "action_items": [{"task": task, "owner": owner} for task, owner in items],
        "open_questions": ["Which city?"],
        **extra,
    }


def valid_decision(owners: list[str], *, dissent: list[dict[str, str]] | None = None) -> str:
    """A decision that passes validation."""
    assert decision_schema(owners)
    return json.dumps(decision_record("Pilot in Germany first", "Smallest bet that tests demand",
                                      [(f"Next step for {owner}", owner) for owner in owners[:3]], dissent=dissent))


def framing(roles: list[str]) -> str:
    """A chair's framing answer."""
    return json.dumps({"agenda": "1. Market\n2. Money\n3. Risks",
                       "questions": {role: f"Question for {role}?" for role in roles}})


def structured_answer(request: LLMRequest, roles: list[str], *, stance: dict[str, Any],
                      decide: Callable[[], str]) -> Step | None:
    """The answer to a request for JSON: the chair's framing for ``roles``, a member's ``stance``, a
    ranking (clearest first), else the decision ``decide`` gives; None for a free-text request."""
    schema = schema_of(request)
    if schema is None:
        return None
    props = schema.get("properties", {})
    if "questions" in props:
        return say(framing(roles))
    if "position" in props:
        return say(json.dumps(stance))
    if "ranking" in props:
        labels = props["ranking"]["items"]["enum"]
        return say(json.dumps({"ranking": sorted(labels), "reason": "clearest first"}))
    return say(decide())
