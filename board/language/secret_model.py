"""The learned half of the memory's secret filter: what a fact looks like to the model, and its score.

:mod:`board.language.secrets` reads a fact (``key: value``, or a sentence someone said) with its pattern rules; this
module scores the same fact with a logistic regression trained by ``scripts/train_classifiers.py`` on
``tests/data/memory_secrets*.jsonl`` (weights in ``secret_model.json`` beside this file).

What the model sees (round secrets52; before it, hand-made features only): the fact written as one line,
``"<key with spaces> : <value>"`` in lower case (:func:`fact_text`), read as

- **character n-grams**: every run of 2 to 5 characters inside each word, the word padded with a space on each side
  (" pw", "p/w ", "2019 ", "!!"): a password's mix, a service's name, a number's length, in any language or spelling;
- **word n-grams**: each word and each pair of neighbouring words ("host key", "memorable info");
- **shape features**: the hand-made ones of earlier rounds (:func:`fact_features`: the key's head, a token's shape
  and the word before it, the value's length), kept because leave-one-set-out said they help.

Each block is a TF-IDF vector (sublinear term frequency, smoothed inverse document frequency from the training rows,
scaled to unit length); a feature not seen in at least two training rows counts nothing. The score is the logistic of
the weights' dot product (:class:`SecretModel`). All of it is pure Python (no numpy at run time): one fact costs a few
hundred dict lookups. The model reads the fact only, not the rules' answer; the two are put together by
:meth:`SecretModel.decide`: what the rules refuse stays refused (``veto`` 0: the model never lets through what a rule
caught), and what the model scores from its ``threshold`` on is refused too, whatever the rules say.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

__all__ = ["BLOCKS", "MODEL_FILE", "SecretModel", "fact_features", "fact_text", "grams", "load", "secret_model"]

MODEL_FILE = Path(__file__).with_name("secret_model.json")
_TOKEN = re.compile(r"\S+")
#: The feature blocks, each its own unit-length TF-IDF vector: characters, words, shapes.
BLOCKS = ("c", "w", "h")


def fact_text(key: str | None, value: str) -> str:
    """The fact as the n-grams read it: ``"<key with spaces> : <value>"`` in lower case ("" for a sentence's key)."""
    return f"{(key or '').replace('_', ' ')} : {value}".lower()


def grams(key: str | None, value: str) -> dict[str, Counter[str]]:
    """The fact's features by block (:data:`BLOCKS`), each with how often it occurs."""
    text = fact_text(key, value)
    words = text.split()
    chars: list[str] = []
    for word in words:
        padded = f" {word} "
        size = len(padded)
        chars += [padded[i:i + n] for n in (2, 3, 4, 5) if n <= size for i in range(size - n + 1)]
    said = [*words, *(f"{a} {b}" for a, b in pairwise(words))]
    return {"c": Counter(chars), "w": Counter(said), "h": Counter(fact_features(key, value))}


@dataclass(frozen=True)
class SecretModel:
    """A logistic regression over TF-IDF blocks. ``features`` maps a block's feature to (idf, weight); ``threshold``
    and ``veto`` put the score beside the rules (:meth:`decide`)."""

    features: Mapping[str, Mapping[str, tuple[float, float]]]
    bias: float
    threshold: float = 0.5
    veto: float = 0.0

    def margin(self, found: Mapping[str, Counter[str]]) -> float:
        """The weights' dot product with the fact's unit-length TF-IDF blocks, plus the bias."""
        z = self.bias
        for block, counts in found.items():
            known = self.features.get(block)
            if not known:
                continue
            dot = norm = 0.0
            get = known.get
            for feature, count in counts.items():
                seen = get(feature)
                if seen is not None:
                    idf, weight = seen
                    x = idf if count == 1 else (1.0 + math.log(count)) * idf
                    dot += x * weight
                    norm += x * x
            if norm:
                z += dot / math.sqrt(norm)
        return z

    def score(self, key: str | None, value: str) -> float:
        """The probability that ``key: value`` (``key`` None: a sentence) is a secret."""
        z = self.margin(grams(key, value))
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def decide(self, probability: float, rule: bool) -> bool:
        """Yes (refuse) from ``threshold`` on, or when a rule said yes and the score is not under ``veto``."""
        return probability >= self.threshold or (rule and probability >= self.veto)

    def to_json(self) -> dict[str, Any]:
        """The model as written to ``secret_model.json``: per block, its features (one string, a line each: the
        file loads in a few milliseconds) and, in the same order, their idf and weight."""
        blocks = {}
        for block, known in self.features.items():
            names = sorted(known)
            blocks[block] = {"features": "\n".join(names), "idf": [round(known[f][0], 3) for f in names],
                             "weights": [round(known[f][1], 4) for f in names]}
        return {"bias": round(self.bias, 4), "threshold": self.threshold, "veto": self.veto, "blocks": blocks}


def load(path: Path) -> SecretModel:
    """The model written by :meth:`SecretModel.to_json` at ``path``."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    blocks = {block: dict(zip(part["features"].split("\n"), zip(part["idf"], part["weights"], strict=True),
                              strict=True))
              for block, part in raw["blocks"].items()}
    return SecretModel(blocks, float(raw["bias"]), float(raw["threshold"]), float(raw.get("veto", 0.0)))


@cache
def secret_model() -> SecretModel:
    """The shipped model (loaded once, on the first fact checked)."""
    return load(MODEL_FILE)


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
    """The hand-made shape features of ``key: value`` (``key`` None: a sentence someone said)."""
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
