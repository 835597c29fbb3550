"""``sabha chta``: the parser's "invalid choice" with a "did you mean 'chat'?" (difflib over the real names).

:class:`SuggestingParser` is the ``sabha`` parser's class, and so of every subcommand's parser made from it
(``sabha sessions shwo`` gets "did you mean 'show'?" too). The error stays the one line argparse gives,
the list of choices included; the closest name, when one is close, comes first.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["SuggestingParser", "closest"]


def closest(given: str, names: Any) -> str | None:
    """The name in ``names`` ``given`` most likely misspells, or None when none is close."""
    import difflib  # only for a mistyped name: not imported by every command that parses fine

    found = difflib.get_close_matches(given, [str(name) for name in names], n=1, cutoff=0.6)
    return found[0] if found else None


class SuggestingParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose invalid choice says which choice was meant."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            guess = closest(str(value), choices)
            if guess is not None:
                listed = ", ".join(map(repr, choices))
                raise argparse.ArgumentError(action, f"invalid choice: {value!r}: did you mean {guess!r}? "
                                                     f"(choose from {listed})")
        super()._check_value(action, value)
