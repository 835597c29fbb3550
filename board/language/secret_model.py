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

import base64
import json
import math
import re
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from itertools import pairwise
from operator import is_not
from pathlib import Path
from typing import Any, cast

__all__ = ["BLOCKS", "MODEL_FILE", "Block", "SecretModel", "fact_features", "fact_text", "grams", "load",
           "secret_model"]

MODEL_FILE = Path(__file__).with_name("secret_model.json")
_TOKEN = re.compile(r"\S+")
#: The feature blocks, each its own unit-length TF-IDF vector: characters, words, shapes.
BLOCKS = ("c", "w", "h")


def fact_text(key: str | None, value: str) -> str:
    """The fact as the n-grams read it: ``"<key with spaces> : <value>"`` in lower case ("" for a sentence's key)."""
    return f"{(key or '').replace('_', ' ')} : {value}".lower()


def grams(key: str | None, value: str) -> dict[str, set[str]]:
    """The fact's features by block (:data:`BLOCKS`); each counts once however often it occurs."""
    text = fact_text(key, value)
    words = text.split()
    chars: list[str] = []
    for word in words:
        padded = f" {word} "
        size = len(padded)
        chars += [padded[i:i + n] for n in (2, 3, 4, 5) if n <= size for i in range(size - n + 1)]
    return {"c": set(chars), "w": {*words, *(f"{a} {b}" for a, b in pairwise(words))},
            "h": set(fact_features(key, value))}


@dataclass(frozen=True)
class Block:
    """One block's features: each one's row in ``index``; ``scores`` holds its idf times its weight, ``norms`` its
    idf squared (stored as float32 arrays, held as lists: reading a list's item makes no new float)."""

    index: Mapping[str, int]
    scores: Sequence[float]
    norms: Sequence[float]

    @classmethod
    def of(cls, features: Mapping[str, tuple[float, float]]) -> Block:
        """The block of ``{feature: (idf, weight)}``."""
        names = sorted(features)
        return cls({f: i for i, f in enumerate(names)}, [features[f][0] * features[f][1] for f in names],
                   [features[f][0] ** 2 for f in names])

    def margin(self, found: Iterable[str]) -> float:
        """The weights' dot product with the unit-length TF-IDF vector of ``found`` (C-level maps: a fact's few
        hundred features cost tens of microseconds)."""
        rows = cast("list[int]", list(filter(_KNOWN, map(self.index.get, found))))
        norm = sum(map(self.norms.__getitem__, rows))
        return sum(map(self.scores.__getitem__, rows)) / math.sqrt(norm) if norm else 0.0


_KNOWN = partial(is_not, None)


@dataclass(frozen=True)
class SecretModel:
    """A logistic regression over TF-IDF blocks (:class:`Block` by name); ``threshold`` and ``veto`` put the score
    beside the rules (:meth:`decide`)."""

    blocks: Mapping[str, Block]
    bias: float
    threshold: float = 0.5
    veto: float = 0.0

    @classmethod
    def of(cls, features: Mapping[str, Mapping[str, tuple[float, float]]], bias: float, threshold: float = 0.5,
           veto: float = 0.0) -> SecretModel:
        """The model of ``{block: {feature: (idf, weight)}}`` (what the trainer learns)."""
        return cls({b: Block.of(fs) for b, fs in features.items()}, bias, threshold, veto)

    def score(self, key: str | None, value: str) -> float:
        """The probability that ``key: value`` (``key`` None: a sentence) is a secret."""
        z = self.bias
        for name, found in grams(key, value).items():
            block = self.blocks.get(name)
            if block is not None:
                z += block.margin(found)
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def decide(self, probability: float, rule: bool) -> bool:
        """Yes (refuse) from ``threshold`` on, or when a rule said yes and the score is not under ``veto``."""
        return probability >= self.threshold or (rule and probability >= self.veto)

    def to_json(self) -> dict[str, Any]:
        """The model as written to ``secret_model.json``: per block, its features (one string, a line each) and, in
        the same order, their scores and norms as base64 float32 (the file loads in a few milliseconds)."""
        blocks = {}
        for name, block in self.blocks.items():
            names = sorted(block.index, key=block.index.__getitem__)
            blocks[name] = {"features": "\n".join(names),
                            "scores": base64.b64encode(array("f", block.scores).tobytes()).decode(),
                            "norms": base64.b64encode(array("f", block.norms).tobytes()).decode()}
        return {"bias": round(self.bias, 4), "threshold": self.threshold, "veto": self.veto, "blocks": blocks}


def load(path: Path) -> SecretModel:
    """The model written by :meth:`SecretModel.to_json` at ``path``."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    blocks = {}
    for name, part in raw["blocks"].items():
        scores, norms = array("f"), array("f")
        scores.frombytes(base64.b64decode(part["scores"]))
        norms.frombytes(base64.b64decode(part["norms"]))
        names = part["features"].split("\n")
        if not len(names) == len(scores) == len(norms):
            raise ValueError(f"{path}: block {name!r} is damaged; run scripts/train_classifiers.py write secrets")
        blocks[name] = Block(dict(zip(names, range(len(names)), strict=True)), scores.tolist(), norms.tolist())
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
