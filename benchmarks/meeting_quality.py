"""Meeting quality under adversarial models: does every dissenter's objection reach the decision?

Each scenario is a board meeting (chair + five specialists, 3 rounds) on the scripted
model of the test suite, playing one way a meeting loses what a board is for:

- always agrees: every member supports every time (sycophancy);
- critic objects in text only: the critic opposes in words, never calls log_disagreement,
  and the chair never mentions it;
- chair drops dissent: the critic logs a severity-5 disagreement; the chair's decision has
  no dissent at all, every time it is asked;
- placeholder dissent: the chair records the critic as ``{"why": "noted"}`` every time;
- consensus forged for a dissenter: finance logs a strength-5 consensus naming the critic,
  who opposes; the chair leaves the critic out;
- unanimous round 1: everyone supports at first; asked for the case against, the critic
  turns to oppose;
- long critic statement: 2,500 characters whose last sentence is the mitigation.

For each: the dissenters (members whose final stance is oppose, or who logged an
unresolved severity >= 3 disagreement), how many of them are in the decision's dissent in
their own words (goal: all), whether Sabha had to restore one, the stop reason, rounds
and model calls. The long-statement row also says whether the mitigation reached the
other members' next prompts and the chair. Prints a table; asserts nothing.

Run: python benchmarks/meeting_quality.py
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.llm.base import LLMRequest
from board.llm.resilience import RetryPolicy
from board.roles import RosterSpec
from board.room.decision import cites
from board.room.meeting import MeetingResult, MeetingRun, MeetingSettings
from board.workspace.paths import copy_default_workspace
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, say

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
OWNERS = ["general", *SPECIALISTS]
MITIGATION = "Mitigation: cap the German pilot at 50k euros with a kill date in June."


def stance(position: str, assumption: str = "the numbers hold up") -> str:
    return "STANCE: " + json.dumps({"position": position, "confidence": 0.7, "assumption": assumption})


def decision(dissent: list[dict[str, str]] | None = None) -> str:
    return json.dumps({
        "recommendation": "Pilot Germany for one quarter", "rationale": "Smallest bet that tests demand",
        "consensus_points": ["Start small"], "dissent": dissent or [],
        "action_items": [{"task": f"Next step for {o}", "owner": o} for o in OWNERS[:3]], "open_questions": [],
    })


def round_of(text: str) -> int:
    match = re.search(r"Round (\d+) of at most", text)
    return int(match.group(1)) if match else 0


@dataclass
class Scenario:
    """A scripted meeting: what each member says per round and what the chair decides."""

    name: str
    say: Callable[[str, int, str], Step | str]  # (role, round, prompt) -> statement
    decide: Callable[[str], str] = lambda prompt: decision()  # the chair's decision, however often asked
    seen: dict[str, bool] = field(default_factory=dict)

    def model(self) -> ScriptedModel:
        def answer(request: LLMRequest) -> Step:
            role = request.persona.role
            text = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
            schema = request.metadata.get("response_schema")
            if isinstance(schema, dict):
                props = schema.get("properties", {})
                if "questions" in props:
                    return say(json.dumps({"agenda": "1. Market\n2. Money\n3. Risks",
                                           "questions": {r: f"Your view on this, {r}?" for r in SPECIALISTS}}))
                if "position" in props:
                    return say(json.dumps({"position": "conditional", "confidence": 0.5, "assumption": "asked"}))
                if "action_items" in props:
                    self.seen["chair saw mitigation"] = MITIGATION in text
                    return say(self.decide(text))
            if request.messages and request.messages[-1].role == "tool":
                return say(f"{role}: logged.\n{stance('oppose' if role == 'critic' else 'conditional')}")
            if "draft decision" in text:
                return say("NO OBJECTION")
            number = round_of(text)
            if number == 2 and role != "critic":
                self.seen.setdefault("members saw mitigation", True)
                self.seen["members saw mitigation"] &= MITIGATION in text
            step = self.say(role, number, text)
            return say(step) if isinstance(step, str) else step

        return ScriptedModel(default=answer)


def agreeable(role: str, number: int, prompt: str) -> str:
    return f"{role}: yes, let's do it.\n{stance('support')}"


def text_only(role: str, number: int, prompt: str) -> str:
    if role == "critic":
        return f"I object: EU VAT registration in every market eats the pilot's margin.\n{stance('oppose', 'VAT')}"
    return f"{role}: a pilot is fine.\n{stance('conditional')}"


def logged(role: str, number: int, prompt: str) -> Step | str:
    if role == "critic" and number == 2:
        return call("log_disagreement", {"target_participant_name": "finance", "topic": "unhedged FX",
                                         "reasoning": "Euro revenue against rupee costs is unhedged", "severity": 5})
    return text_only(role, number, prompt)


def forged(role: str, number: int, prompt: str) -> Step | str:
    if role == "finance" and number == 2:
        return call("log_consensus", {"participants": ["finance", "strategy", "critic"],
                                      "topic": "Go to Europe now", "strength": 5})
    if role == "critic":
        return f"Europe now is a mistake: home churn comes first.\n{stance('oppose', 'churn stays high')}"
    return f"{role}: go.\n{stance('support')}"


def unanimous_first(role: str, number: int, prompt: str) -> str:
    if role == "critic" and "strongest case AGAINST" in prompt:
        return f"Made honestly, the case against wins: our support team cannot cover EU hours.\n{stance('oppose')}"
    if role == "critic" and number > 2:
        return f"Still: nobody covers EU support hours.\n{stance('oppose', 'support hours')}"
    return f"{role}: agreed.\n{stance('support')}"


def long_statement(role: str, number: int, prompt: str) -> str:
    if role == "critic" and number == 1:
        filler = " ".join(f"Risk {i}: the regulatory load differs by country and has to be costed." for i in range(36))
        return f"{filler} {MITIGATION}\n{stance('oppose', 'regulatory cost exceeds the cap')}"
    return text_only(role, number, prompt)


SCENARIOS = [
    Scenario("always agrees", agreeable),
    Scenario("critic objects in text only", text_only),
    Scenario("chair drops dissent", logged),
    Scenario("placeholder dissent ('noted')", logged,
             decide=lambda prompt: decision([{"who": "critic", "why": "noted"}])),
    Scenario("consensus forged for a dissenter", forged),
    Scenario("unanimous round 1", unanimous_first),
    Scenario("long critic statement, mitigation last", long_statement),
]


async def run(scenario: Scenario, root: Path) -> tuple[MeetingResult, MeetingRun, ScriptedModel]:
    model = scenario.model()
    settings = BoardSettings(
        workspace=root / "workspace", data_dir=root / f"data-{scenario.name[:12].replace(' ', '-')}",
        roster=RosterSpec(),
        agent=AgentSettings(default_model="scripted:main", retry=RetryPolicy(retries=0, timeout_s=5)),
        meetings=MeetingSettings(max_turns_per_agent=3, abridge_chars=900),
    )
    async with await Board.open(settings, model.registry()) as board:
        meeting = board.parts.room.prepare("Should we expand to Europe?")
        result = await meeting.run()
    return result, meeting, model


async def main() -> None:
    logging.basicConfig(level=logging.ERROR)  # the chair's refused drafts are expected here
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_default_workspace(root / "workspace")
        for scenario in SCENARIOS:
            result, meeting, model = await run(scenario, root)
            dissenters = meeting.dissenters()
            kept = [who for who, said in dissenters.items() if result.decision is not None and any(
                d.who == who and cites(d.why, said) for d in result.decision.dissent)]
            restored = bool(result.decision and result.decision.notes)
            notes = []
            if restored:
                notes.append("restored by Sabha")
            if meeting.challenge_round:
                notes.append("case-against round")
            if "members saw mitigation" in scenario.seen and scenario.name.startswith("long"):
                notes.append(f"mitigation seen by members: {'yes' if scenario.seen['members saw mitigation'] else 'no'}"
                             f", by chair: {'yes' if scenario.seen.get('chair saw mitigation') else 'no'}")
            rows.append((scenario.name, f"{len(kept)}/{len(dissenters)}", result.stop_reason.value,
                         str(result.rounds), str(len(model.requests)), "; ".join(notes) or "-"))
    header = ("scenario", "dissent kept", "stop", "rounds", "model calls", "notes")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    total = sum(int(r[1].split("/")[0]) for r in rows), sum(int(r[1].split("/")[1]) for r in rows)
    print(f"\ndissenters whose objection reached the decision in their own words: {total[0]} of {total[1]} "
          "(goal: all)")


if __name__ == "__main__":
    asyncio.run(main())
