"""System prompt assembly with Jinja2 templates from ``workspace/templates/``.

Order is fixed: the static block (base directives, AGENTS.md, the role's soul, the
roster) then the dynamic block (USER.md, time, channel, sender), then the history
window and the new message. The static block is byte-identical from turn to turn until
a file it is built from changes, so providers can cache it. Templates are re-read when
edited; a broken or unsafe template (see :class:`CheckedLoader`) falls back to the shipped
one and the error is logged once. AGENTS.md and USER.md are checked on every read as well
(:mod:`board.workspace.files`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import jinja2
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from board.llm.base import ChatMessage, PromptBlock
from board.workspace.files import FileProblem, WatchedFile, decode_text, fingerprint, read_checked
from board.workspace.paths import default_workspace_dir
from board.workspace.souls import AgentProfile

__all__ = [
    "DYNAMIC_TEMPLATE",
    "MAX_CONTEXT_FILE_BYTES",
    "MAX_TEMPLATE_BYTES",
    "STATIC_TEMPLATE",
    "BuiltPrompt",
    "CheckedLoader",
    "PromptBuilder",
    "TurnContext",
    "UnsafeTemplate",
]

log = logging.getLogger("sabha.prompt")

MAX_CONTEXT_FILE_BYTES = 64 * 1024
MAX_TEMPLATE_BYTES = 256 * 1024
STATIC_TEMPLATE = "static.md.j2"
DYNAMIC_TEMPLATE = "dynamic.md.j2"


@dataclass(frozen=True)
class TurnContext:
    """The dynamic facts of one turn."""

    channel: str
    place: str
    sender: str
    now: datetime


@dataclass(frozen=True)
class BuiltPrompt:
    """A whole prompt: system blocks plus messages."""

    static: str
    dynamic: str
    messages: tuple[ChatMessage, ...]

    @property
    def blocks(self) -> tuple[PromptBlock, ...]:
        """The system prompt as provider blocks; the static one is cacheable."""
        return (PromptBlock("static", self.static, cacheable=True), PromptBlock("dynamic", self.dynamic))


class UnsafeTemplate(jinja2.TemplateError):
    """A template file failed a check of :func:`read_checked` (outside the workspace, not a
    regular file, too large) or is not UTF-8."""


class CheckedLoader(jinja2.BaseLoader):
    """Loads templates from folders in order, each read checked against its root folder.

    Like ``FileSystemLoader`` (``..`` is refused), plus the checks every prompt file gets on
    every (re)load: a template, or an ``include`` / ``extends`` of one, that is a symlink
    leading out of the workspace, a FIFO or an oversized file raises :class:`UnsafeTemplate`
    instead of being read.
    """

    def __init__(self, folders: Sequence[tuple[Path, Path]]) -> None:
        self.folders = [(folder, root.resolve()) for folder, root in folders]

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        for folder, root in self.folders:
            path = folder.joinpath(*pieces)
            if not os.path.lexists(path):
                continue
            try:
                data = read_checked(path, root=root, max_bytes=MAX_TEMPLATE_BYTES, what=f"template {path}")
            except FileNotFoundError:
                continue  # a dangling symlink: as if it were not there
            except (FileProblem, OSError) as exc:
                raise UnsafeTemplate(str(exc)) from exc
            try:
                source = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UnsafeTemplate(f"template {path} is not UTF-8 (byte {exc.start}); save it as UTF-8") from exc
            return source, str(path), _unchanged(path)
        raise jinja2.TemplateNotFound(template)


def _unchanged(path: Path) -> Callable[[], bool]:
    """Jinja's ``uptodate``: False once ``path`` (or what it points to) changed."""
    seen = fingerprint(path)
    return lambda: fingerprint(path) == seen


def _read_context(data: bytes) -> str:
    return decode_text(data, max_bytes=MAX_CONTEXT_FILE_BYTES, what="file", allow_empty=True).strip()


class PromptBuilder:
    """Builds prompts for any role from the workspace's templates and context files."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        shipped = default_workspace_dir() / "templates"
        self._env = SandboxedEnvironment(
            loader=CheckedLoader([(workspace / "templates", workspace), (shipped, shipped)]),
            auto_reload=True,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
        )
        self._shipped_env = SandboxedEnvironment(
            loader=CheckedLoader([(shipped, shipped)]),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
        )
        root = workspace.resolve()
        self._agents_md = WatchedFile(workspace / "AGENTS.md", _read_context, label="AGENTS.md", root=root,
                                      max_bytes=MAX_CONTEXT_FILE_BYTES)
        self._user_md = WatchedFile(workspace / "USER.md", _read_context, label="USER.md", root=root,
                                    max_bytes=MAX_CONTEXT_FILE_BYTES)
        self._bad_templates: set[str] = set()

    def _render(self, name: str, **context: object) -> str:
        try:
            text = self._env.get_template(name).render(**context)
            self._bad_templates.discard(name)
            return text
        except jinja2.TemplateError as exc:
            if name not in self._bad_templates:
                self._bad_templates.add(name)
                where = getattr(exc, "filename", None) or name
                line = getattr(exc, "lineno", None)
                log.error(
                    "template %s%s is broken (%s); using the shipped template until it is fixed",
                    where,
                    f" line {line}" if line else "",
                    exc,
                )
            return self._shipped_env.get_template(name).render(**context)

    def render(self, name: str, **context: object) -> str:
        """Render any workspace template (e.g. ``minutes.md.j2``), falling back to the shipped one."""
        return self._render(name, **context)

    def static(self, agent: AgentProfile, colleagues: list[AgentProfile], roster: str) -> str:
        """The cacheable block for ``agent``."""
        return self._render(
            STATIC_TEMPLATE,
            agents_md=self._agents_md.get() or "",
            agent=agent,
            soul=agent.soul.text.strip(),
            roster=roster,
            colleagues=[c for c in colleagues if c.role != agent.role],
        ).strip() + "\n"

    def _user_md_text(self) -> str:
        state = self._user_md.state()
        if state.value:
            return state.value
        if state.error:
            return "(USER.md could not be read; the owner has been told in the log)"
        return "(USER.md is empty: nothing is known about the Director yet)"

    def dynamic(self, turn: TurnContext) -> str:
        """The per-turn block."""
        return self._render(
            DYNAMIC_TEMPLATE,
            user_md=self._user_md_text(),
            now=turn.now.strftime("%A %Y-%m-%d %H:%M %Z").strip(),
            channel=turn.channel,
            place=turn.place,
            sender=turn.sender,
        ).strip() + "\n"

    def build(
        self,
        agent: AgentProfile,
        colleagues: list[AgentProfile],
        roster: str,
        turn: TurnContext,
        history: list[ChatMessage],
        message: str,
    ) -> BuiltPrompt:
        """The whole prompt for one turn."""
        messages = (*history, ChatMessage(role="user", content=message))
        return BuiltPrompt(self.static(agent, colleagues, roster), self.dynamic(turn), messages)
