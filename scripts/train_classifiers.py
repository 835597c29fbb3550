"""Train the learned halves of addressing by name and of the secret filter, and say how they generalise.

    python scripts/train_classifiers.py cv        # leave-one-set-out figures, rules alone and rules + model
    python scripts/train_classifiers.py write     # train on every set, write the shipped weights
    python scripts/train_classifiers.py write secrets   # only the secret filter's (or: addressing)

Leave-one-set-out: for each labelled set in ``tests/data/``, train on all the others and measure on the one
left out (the blind sets, written by someone who had read neither the rules nor the sets, are the honest folds).
Addressing is measured through the real :class:`board.routing.router.Router` on the shipped roster; secrets
through :func:`board.language.secret_rules.secret_reason` / ``sentence_reason``.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from board.envelope import Envelope  # noqa: E402
from board.language import secret_model  # noqa: E402
from board.language import secrets as secret_rules  # noqa: E402
from board.language.learned import LinearModel, fit, fit_sparse  # noqa: E402
from board.language.secret_model import SecretModel  # noqa: E402
from board.routing import address_model, addressing  # noqa: E402
from board.routing.router import NOBODY, Router  # noqa: E402

DATA = ROOT / "tests" / "data"
ADDRESS_SETS = ["addressing", "addressing_tuning", "addressing_heldout", "addressing_heldout2",
                "addressing_heldout3", "addressing_blind:0", "addressing_blind:1", "addressing_fresh:0",
                "addressing_fresh:1", "addressing_blind3:0", "addressing_blind3:1", "addressing_tuning46"]
SECRET_SETS = ["memory_secrets", "memory_secrets_tuning2", "memory_secrets_tuning3", "memory_secrets_review1",
               "memory_secrets_heldout3", "memory_secrets_tuning4", "memory_secrets_tuning5",
               "memory_secrets_tuning6", "memory_secrets_tuning7", "memory_secrets_blind:0",
               "memory_secrets_blind:1",
               "memory_secrets_fresh:0", "memory_secrets_fresh:1",
               "memory_secrets_blind3:0", "memory_secrets_blind3:1", "memory_secrets_tuning46",
               "memory_secrets_blind4:0", "memory_secrets_blind4:1", "memory_secrets_tuning46b",
               "memory_secrets_blind5:0", "memory_secrets_blind5:1", "memory_secrets_tuning47",
               "memory_secrets_blind6:0", "memory_secrets_blind6:1", "memory_secrets_tuning48",
               "memory_secrets_blind7:0", "memory_secrets_blind7:1", "memory_secrets_tuning49",
               "memory_secrets_blind8:0", "memory_secrets_blind8:1", "memory_secrets_tuning50",
               "memory_secrets_blind9:0", "memory_secrets_blind9:1", "memory_secrets_blind10:0",
               "memory_secrets_blind10:1", "memory_secrets_tuning51", "memory_secrets_tuning52"]
RULES_ONLY = SecretModel({}, -40.0, threshold=1.0, veto=0.0)  # never says yes
Model = TypeVar("Model", LinearModel, SecretModel)


def rows(name: str) -> list[dict[str, Any]]:
    """A set's rows; ``name:0`` / ``name:1``: its even / odd rows (halves of the blind sets, for folds)."""
    name, _, half = name.partition(":")
    text = (DATA / f"{name}.jsonl").read_text(encoding="utf-8")
    every = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [r for r in every if zlib.crc32(json.dumps(r).encode()) % 2 == int(half)] if half else every


def shipped_router() -> Router:
    files = {"general": ROOT / "workspace" / "SOUL.md"}
    files.update({p.name.removesuffix(".soul.md"): p for p in (ROOT / "workspace" / "board").glob("*.soul.md")})
    fields: dict[str, dict[str, str]] = {}
    for role, path in files.items():
        head = path.read_text(encoding="utf-8").split("---")[1]
        fields[role] = dict(re.findall(r"^(name|title|emoji):\s*(.+?)\s*$", head, re.MULTILINE))
    return Router(list(files), {r: f["name"] for r, f in fields.items()},
                  titles={r: f["title"] for r, f in fields.items()}, emoji={r: f["emoji"] for r, f in fields.items()})


def address_examples(names: Sequence[str]) -> list[tuple[tuple[str, ...], bool]]:
    roster = shipped_router().roster
    out: list[tuple[tuple[str, ...], bool]] = []
    for name in names:
        for row in rows(name):
            want = {row["role"], *row.get("also", [])} if row["role"] else set()
            for m in addressing.mentions(roster, row["text"]):
                out.append((m.features, m.role in want))
    return out


def measure_addressing(name: str, model: LinearModel) -> tuple[float, float, int, int, int]:
    shipped = addressing.address_model
    addressing.address_model = lambda: model  # type: ignore[assignment]
    router = shipped_router()
    tp = fp = fn = 0
    try:
        for row in rows(name):
            route = router.route(Envelope(channel="console", text=row["text"], sender="owner", is_owner=True))
            got = (route.role, list(route.also)) if route.reason != NOBODY else None
            want = (row["role"], row.get("also", [])) if row["role"] else None
            if got is not None and got == want:
                tp += 1
            else:
                fp += got is not None
                fn += want is not None
    finally:
        addressing.address_model = shipped  # type: ignore[assignment]
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), tp, fp, fn


def secret_examples(names: Sequence[str]) -> list[tuple[dict[str, set[str]], bool]]:
    """Each labelled fact's features by block (as the filter reads the value), and whether it is a secret."""
    return [(_grams(r["key"], r["value"]), bool(r["secret"])) for n in names for r in rows(n)]


@functools.cache
def _grams(key: str | None, value: str) -> dict[str, set[str]]:
    return secret_model.grams(key, secret_rules.as_read(value))  # read once for every fold


def fit_secrets(examples: Sequence[tuple[dict[str, set[str]], bool]], *, l2: float, epochs: int,
                min_df: dict[str, int], threshold: float, veto: float) -> SecretModel:
    """TF-IDF blocks (a feature kept when at least ``min_df`` of its block's rows hold it; each counts once in a row,
    by its smoothed idf; each block of a row scaled to unit length) and a logistic regression over them
    (:func:`board.language.learned.fit_sparse`)."""
    n = len(examples)
    df: dict[tuple[str, str], int] = Counter(
        (block, feature) for found, _y in examples for block, counts in found.items() for feature in counts)
    index: dict[tuple[str, str], int] = {}
    idf: list[float] = []
    for (block, feature), count in sorted(df.items()):
        if count >= min_df[block]:
            index[(block, feature)] = len(idf)
            idf.append(math.log((1 + n) / (1 + count)) + 1.0)
    vectors: list[list[tuple[int, float]]] = []
    for found, _y in examples:
        row: list[tuple[int, float]] = []
        for block, counts in found.items():
            part = [(i, idf[i]) for f in counts if (i := index.get((block, f))) is not None]
            norm = math.sqrt(sum(x * x for _i, x in part)) or 1.0
            row += [(i, x / norm) for i, x in part]
        vectors.append(row)
    weights, bias = fit_sparse(vectors, [y for _f, y in examples], l2=l2, epochs=epochs)
    blocks: dict[str, dict[str, tuple[float, float]]] = {b: {} for b in secret_model.BLOCKS}
    for (block, feature), i in index.items():
        blocks[block][feature] = (idf[i], weights[i])
    return SecretModel.of(blocks, bias, threshold, veto)


def measure_secrets(name: str, model: SecretModel) -> tuple[int, int, int, int]:
    """(secrets let through, secrets, harmless refused, harmless) with ``model`` beside the rules."""
    missed = refused = secrets = harmless = 0
    for r in rows(name):
        said = (secret_rules.sentence_reason(r["value"], model) if r["key"] is None
                else secret_rules.secret_reason(r["key"], r["value"], model)) is not None
        if r["secret"]:
            secrets += 1
            missed += not said
        else:
            harmless += 1
            refused += said
    return missed, secrets, refused, harmless


def cross_validate(sets: Sequence[str], train: Callable[[Sequence[str]], Model],
                   show: Callable[[str, Model], str]) -> None:
    """Each set measured by a model trained on the others; a blind set's halves are folds of their own, and
    the whole blind set is measured with both its halves left out too (as a set never seen)."""
    wholes = sorted({s.partition(":")[0] for s in sets if ":" in s})
    for held in [*sets, *wholes]:
        model = train([s for s in sets if s != held and s.partition(":")[0] != held])
        print(f"{held:28s} rules: {show(held, RULES_ONLY)}   rules+model: {show(held, model)}")


def train_addressing(names: Sequence[str]) -> LinearModel:
    return fit(address_examples(names), l2=ADDRESS_L2, threshold=ADDRESS_THRESHOLD, veto=ADDRESS_VETO,
               soft_veto=ADDRESS_SOFT_VETO)


def train_secrets(names: Sequence[str]) -> SecretModel:
    return fit_secrets(secret_examples(names), l2=SECRET_L2, epochs=SECRET_EPOCHS, min_df=SECRET_MIN_DF,
                       threshold=SECRET_THRESHOLD, veto=SECRET_VETO)


import os  # noqa: E402

ADDRESS_L2 = float(os.environ.get("L2", "0.003"))
SECRET_L2 = float(os.environ.get("SECRET_L2", "0.0015"))
SECRET_EPOCHS = int(os.environ.get("SECRET_EPOCHS", "8"))
SECRET_MIN_DF = {"c": 2, "w": 1, "h": 1}
SECRET_THRESHOLD = float(os.environ.get("THRESHOLD", "0.945"))
SECRET_VETO = float(os.environ.get("VETO", "0"))
ADDRESS_THRESHOLD = float(os.environ.get("ATHRESHOLD", "0.8"))
ADDRESS_VETO = float(os.environ.get("AVETO", "0"))
ADDRESS_SOFT_VETO = float(os.environ.get("ASOFT", "0.7"))


def show_addressing(name: str, model: LinearModel) -> str:
    p, r, tp, fp, fn = measure_addressing(name, model)
    return f"P {p:.3f} R {r:.3f} (tp {tp} fp {fp} fn {fn})"


def show_secrets(name: str, model: SecretModel) -> str:
    missed, secrets, refused, harmless = measure_secrets(name, model)
    return f"let through {missed}/{secrets}, refused {refused}/{harmless} = {refused / max(harmless, 1):.1%}"


def main(argv: list[str]) -> None:
    what = argv[1] if len(argv) > 1 else "cv"
    part = argv[2] if len(argv) > 2 else "both"
    if what == "cv":
        if part in ("both", "addressing"):
            cross_validate(ADDRESS_SETS, train_addressing, show_addressing)
        if part in ("both", "secrets"):
            cross_validate(SECRET_SETS, train_secrets, show_secrets)
    elif what == "write":
        trained = ([(lambda: train_addressing(ADDRESS_SETS), address_model.MODEL_FILE)]
                   if part in ("both", "addressing") else [])
        if part in ("both", "secrets"):
            trained.append((lambda: train_secrets(SECRET_SETS), secret_model.MODEL_FILE))
        for train, path in trained:  # "write secrets" leaves the addressing weights as they are
            model = train()
            path.write_text(json.dumps(model.to_json(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv)
