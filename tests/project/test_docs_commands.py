"""Every ``sabha ...`` command the README and the docs pages show is one the real CLI accepts.

A command is read from fenced and indented code blocks (a line, or a ``|`` / ``&&`` / ``;`` segment of one,
whose command word is ``sabha`` or a path ending in ``/sabha``, after any ``VAR=value`` prefix) and from inline
code spans that start that way. Its words (``shlex``; ``# comments`` and ``> file`` redirections dropped) go to
the parser ``sabha`` itself builds (:func:`bot.cli.main.build_parser`); a usage error (argparse's exit code 2)
fails the test, naming the file, the line and argparse's message. ``--help`` (exit 0) passes. Placeholders such
as ``<role>`` are fine wherever the parser takes them; ``[--json]`` written as if literal is not.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.cli.main import build_parser  # the one place this test reaches into the product

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
README_MAX_LINES = 200
DOC_FILES = [README, *sorted((REPO / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = {"|", "||", "&&", ";", "&"}
_REDIRECTS = {">", ">>", "<", "2>", "2>>"}


@dataclass(frozen=True)
class Command:
    """One ``sabha`` command shown in a doc: where, as written, and its words after ``sabha``."""

    file: str
    line: int
    text: str
    args: tuple[str, ...]


def _words(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|;&")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _sabha_args(words: list[str]) -> Iterator[tuple[str, ...]]:
    """The arguments of each ``sabha`` command among a shell line's words."""
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            segment.append(word)
            continue
        while segment and _ENV.match(segment[0]):
            segment.pop(0)
        if segment and (segment[0] == "sabha" or segment[0].endswith("/sabha")):
            args: list[str] = []
            rest = iter(segment[1:])
            for arg in rest:
                if arg in _REDIRECTS:
                    next(rest, None)
                else:
                    args.append(arg)
            yield tuple(args)
        segment = []


def _is_command(text: str) -> bool:
    """An inline span that starts with ``sabha `` (a command with words after it, not the name alone)."""
    words = text.split()
    while words and _ENV.match(words[0]):
        words.pop(0)
    return len(words) > 1 and (words[0] == "sabha" or words[0].endswith("/sabha"))


def _code_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of every shell line in a code block, continuation lines and open quotes joined."""
    fenced, previous_blank, indented = False, True, False
    pending: tuple[int, str] | None = None
    for number, line in enumerate(lines, 1):
        if _FENCE.match(line):
            fenced, pending = not fenced, None
            continue
        indented = not fenced and line.startswith("    ") and (previous_blank or indented)
        previous_blank = not line.strip()
        if not (fenced or indented):
            continue
        start, text = (pending[0], f"{pending[1]}\n{line}") if pending else (number, line)
        pending = None
        if text.endswith("\\"):
            pending = (start, text[:-1])
            continue
        try:
            _words(text)
        except ValueError:  # a quote that closes on a later line
            pending = (start, text)
            continue
        yield start, text


def commands(path: Path) -> list[Command]:
    """Every ``sabha`` command ``path`` shows, in code blocks and inline code."""
    name = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else path.name
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [Command(name, number, text.strip(), args)
             for number, text in _code_lines(lines) for args in _sabha_args(_words(text))]
    prose, fenced = [], False
    for line in lines:  # code blocks blanked, so an inline span never reaches into one
        fenced ^= bool(_FENCE.match(line))
        prose.append("" if fenced or _FENCE.match(line) else line)
    text = "\n".join(prose)
    for match in _INLINE.finditer(text):
        span = " ".join(match.group(1).split())
        if _is_command(span):
            number = text.count("\n", 0, match.start()) + 1
            found += [Command(name, number, span, args) for args in _sabha_args(_words(span))]
    return found


def refusal(args: tuple[str, ...]) -> str | None:
    """argparse's message when the real parser refuses ``args``; None when it accepts them."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            build_parser().parse_args(list(args))
    except SystemExit as exc:
        if exc.code not in (0, None):
            lines = err.getvalue().strip().splitlines()
            return lines[-1] if lines else f"exit code {exc.code}"
    return None


@pytest.mark.parametrize("path", DOC_FILES, ids=[str(p.relative_to(REPO)) for p in DOC_FILES])
def test_every_sabha_command_in_the_docs_parses(path: Path) -> None:
    shown = commands(path)
    failed = [f"{c.file}:{c.line}: {c.text!r}: {why}" for c in shown if (why := refusal(c.args))]
    assert not failed, "commands the real `sabha` parser refuses:\n" + "\n".join(failed)


def test_the_extractor_finds_the_commands_it_should(tmp_path: Path) -> None:
    """The reader above is what makes the check mean anything: it finds commands in fenced blocks (with
    comments, pipes, env prefixes, continuation lines), indented blocks and inline spans, and nothing else."""
    readme = commands(README)
    assert len(readme) >= 10, readme
    assert [c.args for c in _inline_and_blocks(tmp_path / "sample.md")] == [
        ("chat",), ("ask", "--role", "critic", "hi there"), ("meeting", "topic"), ("status",),
        ("roundtable",), ("actions", "done", "3"), ("meetings", "show", "<id>"), ("stop",)]
    assert refusal(("stop",)) is not None and refusal(("meetings", "show", "m-1", "[--json]")) is not None
    assert refusal(("--help",)) is None and refusal(("meetings", "show", "<id>", "--json")) is None


def _inline_and_blocks(sample: Path) -> list[Command]:
    sample.write_text("\n".join([
        "Prose mentioning sabha.yaml and the `sabha` command, `sabha.yaml`, `make test`.", "",
        "```sh", 'echo hi | sabha chat   # piped', 'SABHA_CONFIG=x sabha ask --role critic \\', '  "hi there"',
        'sabha meeting topic > minutes.md && sabha status', "echo '{\"a\":", "  1}' | sabha roundtable", "```", "",
        "    sabha actions done 3", "", "Then `sabha meetings\nshow <id>` and `sabha stop`.", ""]),
        encoding="utf-8")
    return commands(sample)


def test_the_readme_is_short() -> None:
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= README_MAX_LINES, (f"README.md has {count} lines (at most {README_MAX_LINES}): "
                                       "move the detail to a docs/ page and link it")
