"""The learned half of addressing by name: what a mention's context looks like to :mod:`board.language.learned`.

:mod:`board.routing.addressing` finds every mention of a role (a slug, name, title, a word close to one, or an
emoji anywhere) and asks its pattern rules why it would be addressed. This module turns the mention, its words
around and the rules' answer into features (:func:`mention_features`) and scores them with the model trained
by ``scripts/train_classifiers.py`` on the labelled sets in ``tests/data/addressing*.jsonl`` (weights in
``address_model.json`` beside this file). The model reads the words only, not the rules' answer; the two are
put together by :meth:`board.language.learned.LinearModel.decide`: a mention the rules take stands unless
the model's probability is under its ``veto``, and one the model scores from its ``threshold`` on is taken
whatever the rules say (a call the rules do not know: "Finance what do u think", "need the devils advocate");
a title the rules take only by default stands from ``soft_veto`` on, and a no the rules read from a word that makes
it someone else's is final (:class:`board.routing.addressing.Reading`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from board.language.learned import LinearModel, load_model

__all__ = ["MODEL_FILE", "address_model", "mention_features"]

MODEL_FILE = Path(__file__).with_name("address_model.json")
_TOKEN = re.compile(r"[^\W\d_][\w'\u2019]*|\d+|[^\w\s]", re.UNICODE)
_ARTICLES = {"the", "our", "my", "your", "a", "an", "their", "his", "her", "its", "any", "some", "every"}
_GREETINGS = {"hey", "hi", "hello", "ok", "okay", "yo", "dear", "so", "and", "also", "pls", "please", "um", "oh", "oye",
              "oi", "arre", "arey", "bro", "bhai", "yaar", "kindly", "mr", "mrs", "ms", "madam", "sir", "dude", "acha"}


@cache
def address_model() -> LinearModel:
    """The shipped model (loaded once)."""
    return load_model(MODEL_FILE)


def _tokens(text: str) -> list[str]:
    return [t.lower().replace("\u2019", "'") for t in _TOKEN.findall(text)]


def mention_features(text: str, start: int, end: int, *, strong: bool, person: bool, exact: bool,
                     source: str) -> list[str]:
    """Features of the mention ``text[start:end]``: the handle's kind, the words and marks right before and
    after it, where it stands, the sentence's shape."""
    before, after = _tokens(text[:start]), _tokens(text[end:])
    words_before = [t for t in before if t[0].isalnum()]
    feats = [f"src:{source}", "strong" if strong else "weak", "person" if person else "thing",
             "exact" if exact else "near"]
    p1 = before[-1] if before else "^"
    p2 = before[-2] if len(before) > 1 else "^"
    n1 = after[0] if after else "$"
    n2 = after[1] if len(after) > 1 else "$"
    feats += [f"p1:{p1}", f"p2:{p2}", f"p12:{p2}_{p1}", f"n1:{n1}", f"n2:{n2}", f"n12:{n1}_{n2}"]
    if n1 in ("'s", "'"):
        feats.append("possessive")
    lead = [t for t in words_before if t not in _GREETINGS]
    if not lead:
        feats.append("opens")
    elif len(words_before) <= 2:
        feats.append("near-start")
    if p1 in _ARTICLES:
        feats.append(f"art:{p1}")
    if not [t for t in after if t[0].isalnum()]:
        feats.append("closes")
    feats.append("question" if "?" in text else "statement")
    first = next((t for t in before + after if t[0].isalnum()), "^")
    feats.append(f"first:{(before[0] if before else '^')}")
    feats.append(f"w0:{first}")
    feats += [f"n1end:{n1[-2:]}", f"p1end:{p1[-2:]}"]
    if {"you", "u", "ya", "your", "ur", "yall"} & set(after[:8]):
        feats.append("you-after")
    if "?" in text[end:]:
        feats.append("question-after")
    if source == "emoji":  # an emoji repeated or after a word decorates it ("night owl 🦉", "💰💰")
        if text[end:].lstrip("\ufe0f ").startswith(text[start:end]) or text[:start].rstrip("\ufe0f ").endswith(
                text[start:end]):
            feats.append("emoji-repeated")
        if words_before and not lead:
            feats.append("emoji-after-greeting")
        elif words_before and p1[0].isalnum():
            feats.append(f"emoji-after-word:{'article' if p1 in _ARTICLES else 'word'}")
    for word in words_before[-4:]:
        feats.append(f"b:{word}")
    for word in [t for t in after if t[0].isalnum()][:4]:
        feats.append(f"a:{word}")
    return feats
