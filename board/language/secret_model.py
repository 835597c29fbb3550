"""The learned half of the memory's secret filter: what a fact looks like to :mod:`board.language.learned`.

:mod:`board.language.secrets` reads a fact (``key: value``, or a sentence someone said) with its pattern rules;
this module turns the fact into features (:func:`fact_features`: the key's words and its
head, the value's words, the shape of each token (digits and how many, a password's mix of letters, digits
and symbols, a long random run), the word before each number-like token, the value's length) and scores them
with the model trained by ``scripts/train_classifiers.py`` on ``tests/data/memory_secrets*.jsonl`` (weights in
``secret_model.json`` beside this file). The model reads the fact only, not the rules' answer; the two are put
together by :meth:`board.language.learned.LinearModel.decide`: what the rules refuse stays refused (the shipped
``veto`` is 0: failing closed, the model never lets through what a rule caught), and what the model scores from
its ``threshold`` on is refused too, whatever the rules say ("router_admin: admin:admin123").
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from board.language.learned import LinearModel, load_model

__all__ = ["MODEL_FILE", "fact_features", "secret_model"]

MODEL_FILE = Path(__file__).with_name("secret_model.json")
_TOKEN = re.compile(r"\S+")


@cache
def secret_model() -> LinearModel:
    """The shipped model (loaded once)."""
    return load_model(MODEL_FILE)


def _shape(token: str) -> str | None:
    """A token's shape when it could be a code or a password, else None (a plain word)."""
    token = token.strip(".,;:()'\"!?")
    if not token:
        return None
    digits = sum(c.isdigit() for c in token)
    letters = sum(c.isalpha() for c in token)
    symbols = len(token) - digits - letters
    if digits and not letters:
        plain = re.sub(r"\D", "", token)
        return f"digits{min(len(plain), 12)}" + ("+sym" if symbols and not re.fullmatch(r"[\d,.]+", token) else "")
    if digits and letters:
        kind = "pwshape" if symbols and not ("@" in token and "." in token) else "alnum"
        return kind + ("-long" if len(token) >= 16 else "")
    if letters and symbols and re.search(r"\w[@#!$%^&*]\w", token):
        return "symword"
    if letters and token[1:] != token[1:].lower() and token[:1].islower():
        return "camel"
    return None


def _words(text: str) -> list[str]:
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return [w for w in re.sub(r"[^a-z0-9]+", " ", text.lower()).split() if w]


def fact_features(key: str | None, value: str) -> tuple[str, ...]:
    """Features of ``key: value`` (``key`` None: a sentence someone said)."""
    feats: list[str] = []
    if key is None:
        feats.append("sentence")
    else:
        kw = _words(key)
        feats += [f"k:{w}" for w in kw] + [f"kh:{kw[-1] if kw else ''}", f"k0:{kw[0] if kw else ''}"]
    tokens = _TOKEN.findall(value)
    words = _words(value)
    feats.append(f"len:{min(len(tokens), 9)}")
    feats += [f"v:{w}" for w in words[:16] if not w.isdigit()]
    previous = "^"
    for token in tokens:
        shape = _shape(token)
        if shape is not None:
            feats += [f"shape:{shape}", f"before:{previous}:{shape.split('-')[0][:6]}"]
        previous = (_words(token) or ["?"])[-1] if not any(c.isdigit() for c in token) else previous
    if re.search(r"[:=]", value):
        feats.append("mark")
    if re.search(r"[\w.+-]+@[\w-]+\.\w", value):
        feats.append("email")
    return tuple(feats)
