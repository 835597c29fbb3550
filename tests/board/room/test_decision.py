"""Decision validation: schema, owners, the critic's dissent, and the offline instance."""

from __future__ import annotations

import json

import jsonschema
import pytest

from board.llm.offline_json import instance_for
from board.room.consult import parse_answer
from board.room.decision import DecisionProblem, decision_schema, validate_decision
from board.room.roundtable import RoundtableInputError, parse_input
from tests.support.board import valid_decision

ROLES = ["general", "finance", "critic"]
#: the critic dissented in the meeting, in these words
CRITIC = {"critic": "Regulatory cost is unmodelled: nobody has priced EU compliance."}


def decision(**overrides: object) -> str:
    """A valid decision of a meeting of ROLES in which the critic dissents, with ``overrides``."""
    base = json.loads(valid_decision(ROLES, dissent=[{"who": "critic", "why": "Regulatory cost is unmodelled"}]))
    return json.dumps({**base, **overrides})


def test_valid_decision_in_a_code_fence() -> None:
    result = validate_decision(f"Here you go:\n```json\n{decision()}\n```", participants=ROLES, dissenters=CRITIC)
    assert result.recommendation.startswith("Pilot") and not result.best_effort


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no json here", "no JSON object"),
        ("{not json}", "does not parse"),
        (decision(action_items=[{"task": "Only one", "owner": "finance"}]), "action_items"),
        (decision(action_items=[{"task": "Do x", "owner": "marketing"}] * 3), "not in the meeting"),
        (decision(dissent=[]), "critic dissented but the dissent does not record it"),
        (decision(dissent=[{"who": "critic", "why": "noted"}]), "does not give their own reasoning"),
        (decision(extra="field"), "schema"),
    ],
)
def test_invalid_decisions_say_what_to_fix(text: str, problem: str) -> None:
    with pytest.raises(DecisionProblem, match=problem):
        validate_decision(text, participants=ROLES, dissenters=CRITIC)


def test_offline_instance_validates_against_the_schema() -> None:
    schema = decision_schema(ROLES)
    text = instance_for(schema, speaker="General", topic="Europe", questions=["What is the cost?"])
    jsonschema.validate(json.loads(text), schema)
    parsed = validate_decision(text, participants=ROLES)
    assert "[offline]" in parsed.recommendation
    assert {a.owner for a in parsed.action_items} == set(ROLES)


def test_consult_answer_parsing() -> None:
    text = "Runway is 14 months.\nConfidence: 0.8\nSuggest consult: research"
    assert parse_answer(text) == ("Runway is 14 months.", 0.8, "research")
    assert parse_answer("Just an answer.") == ("Just an answer.", None, None)


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"context": "x"}', "prompt"),
        ('{"prompt": "   "}', "prompt"),
        ('{"prompt": "x", "max_rounds": 9}', "max_rounds"),
        ('{"prompt": "x", "bogus": 1}', "bogus"),
    ],
)
def test_roundtable_input_errors(text: str, detail: str) -> None:
    with pytest.raises(RoundtableInputError) as err:
        parse_input(text)
    assert detail in str(err.value) + " ".join(err.value.details)


def test_roundtable_input_accepts_context_lists() -> None:
    parsed = parse_input(
        '{"prompt": "Reach CTOs", "context": ["GitHub worked", "LinkedIn did not"], "learnings": ["a"]}')
    assert parsed.context == "- GitHub worked\n- LinkedIn did not" and parsed.max_rounds == 3
