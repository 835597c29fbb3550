"""Addressing by name in plain sentences (seed 003), measured on labelled sets.

One sentence a line with the role it addresses (``null``: none, the chair answers as for
any message) and the roles after it (``also``); an optional ``note`` says why a doubtful
line is labelled so. A sentence addresses a role when it speaks to a board member named by
slug, name, title or emoji: calling it ("Critic, ...", "hey finance"), giving it something
to do ("ask the CFO", "get the critic to review"), or asking for its view in the third
person ("what would the critic say?"). It addresses none when the role word is an ordinary
noun ("my harshest critic", "a finance question", "research shows", "our strategy is"),
names someone else's role ("the CFO of Enron", "our CMO left") or a generic one ("a
finance expert"), or reports what a member said. The sets:

- ``addressing.jsonl``: the first set, written with the rules;
- ``addressing_tuning.jsonl``: written apart from the rules, used to tune them;
- ``addressing_heldout.jsonl``: written apart from the rules before they were read; despite
  its file name it is now a tuning set too (words found only in it went into the rules: review 1,
  finding 7), so its figures say nothing about unseen sentences;
- ``addressing_heldout2.jsonl``: the held-out set, written after review 1 by someone who wrote
  it from how people talk, before the rules were changed for that review, and never used for
  tuning (50 addressed, 50 not: role words with articles, possessives and commas, lists, other
  companies' officers, generic titles). First figures, on the rules of the ``answers`` merge:
  precision 0.750, recall 0.900 (tp 45, fp 15, fn 5). After the changes made from review 1's
  probes and the tuning sets only, measured once: precision 0.849, recall 0.900 (tp 45, fp 8,
  fn 5). Two more changes then followed review 1's own principles on sentences this measurement
  showed (a relative clause after "the/our X," opens no question; "X team," calls only with no
  article before), so the set is no longer clean for those shapes: precision 0.900, recall 0.900.
  Below the 0.95 precision goal: the test holds it to what was measured until the rules reach it.
- ``addressing_heldout3.jsonl``: a second held-out set (30 addressed, 30 not), written after
  those changes and before measuring them on it, never tuned on: precision 0.906, recall 0.967
  (tp 29, fp 3, fn 1); wrong: a title as a plain noun with no article ("Which CEO books",
  "The devil's advocate approach"), "The critic's column", "Can strategy lay out ...". Also a
  held to what was measured, below the 0.95 precision goal.

Round ``answers3`` (issue item 16): ``addressing_heldout2`` and ``addressing_heldout3`` became tuning
sets in this round: their misses were read and the rules changed for them (as general principles,
each stated in :mod:`board.routing.addressing`: a list of members is one addressee phrase; a name between
commas then a question; "what would X do"; embedded "what X thinks"; "question is for X"; a word
that picks a kind makes a title generic; "I'm the CEO" names a job holder; a thing of theirs, "the
critic's column", is talked about; "X: that's ..." is a heading), so no set here is held out any
more and every set is held to the goal. Before / after, precision and recall: first set 1.000 /
1.000 both; tuning 1.000 / 1.000 both; old heldout 0.983 / 0.906 -> 1.000 / 0.984; heldout2
0.900 / 0.900 -> 1.000 / 1.000; heldout3 0.906 / 0.967 -> 1.000 / 1.000. A fresh set written
apart from the rules is measured below.

- ``addressing_blind.jsonl``: the one held-out set that counts (70 addressed, 70 not), written
  by someone who had read neither the rules nor the other sets, given only the roster and the
  labelling rule above; never tuned on. Measured on the rules before round 3: precision 0.803,
  recall 0.757 (tp 53, fp 13, fn 17); after round 3: precision 0.831, recall 0.771 (tp 54, fp 11,
  fn 16). The rules reach 0.95 / 0.9 on every set they were tuned on and fall well short on this
  one: pattern rules do not generalise to how people write (no comma after a name: "Finance what
  do u think", emoji as the addressee: "can 📣 write", "need the devils advocate"; role words as
  nouns: "critic reviews on yelp", "im my own cfo, cmo and janitor"). The test holds it to what
  was measured, so a regression fails; reaching the goal on it needs another approach, not more
  patterns tuned on it.

Round ``classify`` (issue 36, item 16): a learned model beside the rules (:mod:`board.routing.address_model`,
logistic regression over a mention's context, trained by ``scripts/train_classifiers.py`` on every set above,
the blind one included, so ``addressing_blind`` is a training set from here on). Estimated first by
leave-one-set-out cross-validation (the model trained on the other sets): on ``addressing_blind`` rules alone
0.831 / 0.771, rules + model 0.845 / 0.857; on the tuning sets precision 0.938-1.000, recall 0.984-1.000.

- ``addressing_fresh.jsonl``: the held-out set of this round (110 addressed, 110 not), written by someone who
  had read nothing of the project's rules or sets, opened only after the method was frozen and committed,
  measured ONCE and never tuned on: rules alone precision 0.832, recall 0.764 (tp 84, fp 17, fn 26); rules +
  model precision 0.861, recall 0.845 (tp 93, fp 15, fn 17). Below the goal (0.95 / 0.9): the test holds it
  to what was measured, so a regression fails. The model brought recall up (calls with no comma, an emoji
  inside the sentence) and precision only a little: a role word used as a common noun is still taken for a
  call when the rules take it (the model never overrules them, see the module).

Round ``classify45`` (issue 36, item 16): ``addressing_blind`` and ``addressing_fresh`` BECAME TUNING SETS (their
misses were read; the rules changed as principles stated in :mod:`board.routing.addressing`), so every set here is
held to the goal. What changed: a person's title named with no phrase around it is only a default yes the learned
model may overrule (``soft_veto``); a word that makes a mention someone else's ("a", "which", "my", "play", "the
CFO said", "critic's choice") is a no the model may not overrule; an emoji is read by the same phrases as a title
("can 📣 write"); a call may open any sentence ("... in taxes. finance, how do i"); a bare name before a request
in the second person ("strategy i want you to", "critic tell me why"); "does finance think", "does research have
anything"; an opening order gives any work ("get content to come up with"); "devils advocate" without its
apostrophe; ``@cfo`` (a title) in :mod:`board.routing.router`; "what did X say" reports, it asks no one.
Leave-one-set-out (the model trained on the other sets), precision / recall, before (main) -> after: blind 0.861 /
0.886 -> 0.958 / 0.986; fresh 0.861 / 0.845 -> 0.982 / 0.973 (both now tuning figures: the rules were changed from
their misses); first set 0.990 / 1.000 -> 0.980 / 0.960; tuning 0.938 / 1.000 -> 1.000 / 0.967; old heldout
1.000 / 0.984 -> 1.000 / 0.906; heldout2, heldout3 1.000 / 1.000 both. The next set written by someone who read
nothing is the honest measure.

- ``addressing_blind3.jsonl``: the HELD-OUT set of round classify45 (110 addressed, 110 not), written by someone
  who had read nothing of the project, opened by the lead only after the classify45 method and weights were
  committed, measured ONCE and never tuned on: rules alone precision 0.847, recall 0.755 (tp 83, fp 15, fn 27);
  rules + model precision 0.915, recall 0.782 (tp 86, fp 8, fn 24); main before that round 0.853 / 0.736. Below
  the goal (0.95 / 0.9): the test holds it to what was measured, so a regression fails, and the next round may
  tune on it (then a new set written apart is the measure).

The router is built from the shipped roster's front matter (name, title, emoji) as the
daemon builds it; the test prints precision and recall per set and fails below 0.95 / 0.9.

Round ``classify46`` (issue 36, item 16): ``addressing_blind3`` BECAME A TUNING SET (its misses were read, the rules
changed as principles stated in :mod:`board.routing.addressing`); with the shipped model (trained on it too) it
reaches precision 1.000, recall 0.991 (tp 109, fp 0, fn 1), and 1.000 / 0.991 with a model trained without it.
``addressing_tuning46.jsonl`` (159: 91 addressed, 68 not): written in that round from the principles (misspelt names,
Hinglish, "@handle", emoji, "X?" alone, sending to a member, roll calls; titles and role words as nouns, emoji as
decoration, options offered; 70 before measuring, the rest probes written after the rules), a weak held-out set (its
writer wrote the rules): 1.000 / 0.989 with a model trained without it. ``test_addressing46.py`` says one sentence of
each shape to a real ``sabha chat``. """

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from board.envelope import Envelope
from board.routing.router import NOBODY, Router

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parents[2] / "data" / "addressing.jsonl"


def shipped_router() -> Router:
    """A router over the shipped board's souls, with their names, titles and emoji."""
    files = {"general": ROOT / "workspace" / "SOUL.md"}
    files.update({p.name.removesuffix(".soul.md"): p for p in (ROOT / "workspace" / "board").glob("*.soul.md")})
    fields: dict[str, dict[str, str]] = {}
    for role, path in files.items():
        head = path.read_text(encoding="utf-8").split("---")[1]
        fields[role] = dict(re.findall(r"^(name|title|emoji):\s*(.+?)\s*$", head, re.MULTILINE))
    return Router(list(files), {r: f["name"] for r, f in fields.items()},
                  titles={r: f["title"] for r, f in fields.items()}, emoji={r: f["emoji"] for r, f in fields.items()})


def owner(text: str) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", is_owner=True)


#: (set, least rows, least precision, least recall). Every set is a tuning set now, held to the goal, 0.95 / 0.9.
@pytest.mark.parametrize(("name", "least", "min_precision", "min_recall"), [
    ("addressing", 80, 0.95, 0.9), ("addressing_tuning", 50, 0.95, 0.9), ("addressing_heldout", 80, 0.95, 0.9),
    ("addressing_heldout3", 60, 0.95, 0.9), ("addressing_heldout2", 80, 0.95, 0.9),
    ("addressing_blind", 140, 0.95, 0.9), ("addressing_fresh", 220, 0.95, 0.9), ("addressing_blind3", 220, 0.95, 0.9),
    ("addressing_tuning46", 60, 0.95, 0.9),
], ids=["first-set", "tuning", "tuning-old-heldout", "tuning-heldout3", "tuning-heldout2", "blind", "fresh", "blind3",
        "tuning46"])
def test_addressing_set_precision_and_recall(name: str, least: int, min_precision: float, min_recall: float) -> None:
    data = DATA.with_name(f"{name}.jsonl")
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= least
    router = shipped_router()
    true_pos = false_pos = false_neg = 0
    wrong: list[str] = []
    for row in rows:
        route = router.route(owner(row["text"]))
        addressed = route.reason != NOBODY
        got = (route.role, list(route.also)) if addressed else None
        want = (row["role"], row.get("also", [])) if row["role"] else None
        if got is not None and got == want:
            true_pos += 1
        else:
            false_pos += got is not None
            false_neg += want is not None
        if got != want:
            wrong.append(f"  {row['text']!r}: want {want}, got {got} ({route.reason})")
    precision = true_pos / max(true_pos + false_pos, 1)
    recall = true_pos / max(true_pos + false_neg, 1)
    addressed_rows = sum(1 for r in rows if r["role"])
    figures = (f"{name}: {len(rows)} sentences ({addressed_rows} addressed, {len(rows) - addressed_rows} not); "
               f"precision {precision:.3f}, recall {recall:.3f} (tp {true_pos}, fp {false_pos}, fn {false_neg})")
    print(f"\n{figures}")
    print("\n".join(wrong))
    assert precision >= min_precision and recall >= min_recall, figures + "\n" + "\n".join(wrong)


@pytest.mark.parametrize("held", ["addressing_fresh", "addressing_blind", "addressing_blind3"])
def test_a_model_trained_without_a_set_keeps_the_goal_on_it(held: str) -> None:
    """Leave-one-set-out on the sets written by someone who had read nothing: the learned model trained on every
    other set (``scripts/train_classifiers.py``), beside the rules, reaches 0.95 / 0.9 on the one left out."""
    spec = importlib.util.spec_from_file_location("train_classifiers", ROOT / "scripts" / "train_classifiers.py")
    assert spec is not None and spec.loader is not None
    trainer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trainer)
    model = trainer.train_addressing([n for n in trainer.ADDRESS_SETS if n.partition(":")[0] != held])
    precision, recall, tp, fp, fn = trainer.measure_addressing(held, model)
    figures = f"{held}, held out of training: precision {precision:.3f}, recall {recall:.3f} (tp {tp} fp {fp} fn {fn})"
    print(f"\n{figures}")
    assert precision >= 0.95 and recall >= 0.9, figures


def shipped_counts(name: str) -> tuple[int, int, int, int]:
    """The shipped router on the set ``name``: (rows, true calls, wrong calls, missed calls); a call is right when
    its member (and any others it names) are the labelled ones."""
    rows = [json.loads(line) for line in DATA.with_name(f"{name}.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    router = shipped_router()
    tp = fp = fn = 0
    for row in rows:
        route = router.route(owner(row["text"]))
        got = (route.role, list(route.also)) if route.reason != NOBODY else None
        want = (row["role"], row.get("also", [])) if row["role"] else None
        tp += got is not None and got == want
        fp += got is not None and got != want
        fn += want is not None and got != want
    return len(rows), tp, fp, fn


def test_blind3_is_held_to_what_this_round_reached() -> None:
    """``addressing_blind3`` (see the module docstring): a tuning set since round classify46, held to what it
    reached with the shipped model (tp 109, fp 0, fn 1; was 86 / 8 / 24 when measured once)."""
    rows, tp, fp, fn = shipped_counts("addressing_blind3")
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    print(f"\naddressing_blind3 (tuned on): precision {precision:.3f}, recall {recall:.3f} (tp {tp} fp {fp} fn {fn})")
    assert rows == 220 and tp >= 109 and fp == 0 and fn <= 1


def test_the_held_out_set_of_round_classify46_meets_the_goal() -> None:
    """``addressing_blind4`` (240: 130 addressed, 110 not, 75 of those a role word, title, nickname or emoji that
    calls no one): written by someone who had read nothing of the project, opened by the lead only after round
    classify46's rules and weights were committed, measured ONCE, never tuned on and in no training set
    (``scripts/train_classifiers.py`` ADDRESS_SETS). Measured: precision 0.960, recall 0.915 (tp 119, fp 5, fn 11);
    main before that round 0.912 / 0.800 (tp 104, fp 10, fn 26). The issue's goal (>= 0.95 / >= 0.9 on a part held
    out from tuning) is met there; the test holds it to the goal and to what was measured."""
    rows, tp, fp, fn = shipped_counts("addressing_blind4")
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    print(f"\naddressing_blind4 (held out): precision {precision:.3f}, recall {recall:.3f} (tp {tp} fp {fp} fn {fn})")
    assert rows == 240 and precision >= 0.95 and recall >= 0.9
    assert tp >= 119 and fp <= 5 and fn <= 11


def test_every_route_says_why() -> None:
    router = shipped_router()
    for text in ("@finance runway?", "/ask critic hi", "finance: runway?", "hello", "What does the critic think?"):
        assert router.route(owner(text)).reason, text
    route = router.route(owner("What does the critic think about pricing?"))
    assert route.role == "critic" and "'critic'" in route.reason


def test_a_topic_of_its_own_keeps_its_role() -> None:
    """In a forum topic mapped to a role, plain words do not move the message; ``@role`` still does."""
    router = shipped_router()
    text = "What does the critic think about pricing?"
    assert router.route(Envelope(channel="telegram", text=text, sender="1", is_owner=True, is_group=True,
                                 chat_id="-1", role_hint="finance")).role == "finance"
