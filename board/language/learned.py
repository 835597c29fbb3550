"""A small learned linear model beside the pattern rules: logistic regression over named features.

A model is a frozen :class:`LinearModel` (a weight per feature name, a bias and the decision threshold), kept as
a small JSON file beside the code that uses it and loaded once (:func:`load_model`). Features are strings
("p1:ask", "rule:opinion"); a feature the model has no weight for counts nothing. Training (pure Python, no
dependency) is :func:`fit`, run by ``scripts/train_classifiers.py`` from the labelled sets in ``tests/data/``;
the code that decides only scores (:meth:`LinearModel.probability`). :func:`fit_sparse` trains the same regression
over sparse numeric rows (the secret filter's TF-IDF n-grams, :mod:`board.language.secret_model`).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["LinearModel", "fit", "fit_sparse", "load_model"]


@dataclass(frozen=True)
class LinearModel:
    """Weights over feature names. Beside pattern rules: the answer is yes from ``threshold`` on whatever the
    rules say, and a rule's yes stands unless the probability is under ``veto`` (``soft_veto`` for a rule's
    default yes, one no phrase backs: a title named with nothing around it that speaks to it)."""

    weights: MappingProxyType[str, float]
    bias: float
    threshold: float = 0.5
    veto: float = 0.0
    soft_veto: float = 0.0

    def probability(self, features: Iterable[str]) -> float:
        """The model's probability that the features' example is a yes."""
        z = self.bias + sum(self.weights.get(f, 0.0) for f in set(features))
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def decide(self, probability: float, rule: bool, *, soft: bool = False) -> bool:
        """Yes or no, for a probability of this model and the pattern rules' answer (``soft``: the rules' yes
        is a default, not a phrase they read)."""
        return probability >= self.threshold or (rule and probability >= (self.soft_veto if soft else self.veto))

    def to_json(self) -> dict[str, Any]:
        kept = {f: round(w, 4) for f, w in sorted(self.weights.items()) if abs(w) >= 1e-3}
        return {"bias": round(self.bias, 4), "threshold": self.threshold, "veto": self.veto,
                "soft_veto": self.soft_veto, "weights": kept}


def load_model(path: Path) -> LinearModel:
    """The model written by :meth:`LinearModel.to_json` at ``path``."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return LinearModel(MappingProxyType({str(k): float(v) for k, v in raw["weights"].items()}),
                       float(raw["bias"]), float(raw.get("threshold", 0.5)), float(raw.get("veto", 0.0)),
                       float(raw.get("soft_veto", 0.0)))


def fit(examples: Sequence[tuple[Iterable[str], bool]], *, l2: float = 0.01, epochs: int = 300,
        rate: float = 0.5, threshold: float = 0.5, veto: float = 0.0, soft_veto: float = 0.0) -> LinearModel:
    """Logistic regression by full-batch gradient descent (with AdaGrad steps) over ``(features, label)``."""
    rows = [(sorted(set(f)), 1.0 if y else 0.0) for f, y in examples]
    weights: dict[str, float] = {f: 0.0 for fs, _ in rows for f in fs}
    squared: dict[str, float] = dict.fromkeys(weights, 1e-8)
    bias, bias_sq, n = 0.0, 1e-8, max(len(rows), 1)
    for _ in range(epochs):
        grad: dict[str, float] = {f: l2 * w for f, w in weights.items()}
        grad_bias = 0.0
        for fs, y in rows:
            z = bias + sum(weights[f] for f in fs)
            err = 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0))) - y
            grad_bias += err / n
            for f in fs:
                grad[f] += err / n
        for f, g in grad.items():
            squared[f] += g * g
            weights[f] -= rate * g / math.sqrt(squared[f])
        bias_sq += grad_bias * grad_bias
        bias -= rate * grad_bias / math.sqrt(bias_sq)
    return LinearModel(MappingProxyType(weights), bias, threshold, veto, soft_veto)


def fit_sparse(rows: Sequence[Sequence[tuple[int, float]]], labels: Sequence[bool], *, l2: float, epochs: int = 8,
               rate: float = 0.5, seed: int = 0) -> tuple[list[float], float]:
    """Logistic regression over sparse rows (``(index, value)`` pairs) by stochastic gradient descent with AdaGrad
    steps, the two classes weighted to count alike (each example by ``n / (2 * its class's count)``) and an L2 penalty
    ``l2`` on the weights an example touches: the weights (by index) and the bias. Pure Python: a few seconds for
    thousands of rows of a few hundred features, so leave-one-set-out runs in the test suite."""
    width = 1 + max((i for row in rows for i, _x in row), default=-1)
    weights = [0.0] * width
    squared = [1e-8] * width
    bias, bias_sq = 0.0, 1e-8
    n, positive = len(rows), sum(labels)
    counts = {True: n / (2 * max(positive, 1)), False: n / (2 * max(n - positive, 1))}
    order = list(range(n))
    shuffle = random.Random(seed).shuffle
    for _ in range(epochs):
        shuffle(order)
        for k in order:
            row, y = rows[k], labels[k]
            z = bias
            for i, x in row:
                z += weights[i] * x
            err = (1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0))) - (1.0 if y else 0.0)) * counts[y]
            for i, x in row:
                w = weights[i]
                g = err * x + l2 * w
                s = squared[i] + g * g
                squared[i] = s
                weights[i] = w - rate * g / math.sqrt(s)
            bias_sq += err * err
            bias -= rate * err / math.sqrt(bias_sq)
    return weights, bias
