"""Soul files: parsing, the last-good store and hot reload.

A soul is Markdown with optional YAML front matter (``name``, ``title``, ``emoji``,
``model``, ``temperature``, ``tools``, ``consults``) followed by the personality text. The
:class:`SoulStore` serves the current soul of each role: it notices edits on the next
turn (one ``stat`` per file), keeps the last good version when an edit is broken, falls
back to the shipped default soul when a file is deleted, and picks up soul files added
to the roster's folder.

The last good version outlives the process: given a ``keep_dir`` (the board's data dir
has ``last-good-souls/``), every version that loads is copied there, byte for byte, and a
soul that is broken when a process starts (``sabha ask`` after a bad edit, a restart of
the daemon) is served from that copy, and only without one from the shipped default. A
read-only store (``remember=False``: ``sabha souls``) reads the copies and writes none.

:meth:`SoulStore.watch` uses ``watchfiles`` so changes (and their errors) are applied
and logged as soon as they are saved, not only at the next turn.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from board.llm.base import Thinking
from board.roles import (
    GENERAL,
    SOUL_SUFFIX,
    RosterSpec,
    default_soul_path,
    is_role_slug,
    roster_folder,
    soul_candidates,
)
from board.workspace.files import FileProblem, WatchedFile, decode_text, step_token
from board.workspace.paths import PathEscapeError, default_workspace_dir, resolve_inside

__all__ = [
    "LAST_GOOD_DIR",
    "MAX_SOUL_BYTES",
    "AgentProfile",
    "Soul",
    "SoulMeta",
    "SoulStatus",
    "SoulStore",
    "front_matter",
    "parse_soul",
    "yaml_problem",
]

log = logging.getLogger("sabha.souls")

MAX_SOUL_BYTES = 64 * 1024
#: The folder of the data dir that holds each soul's last good version.
LAST_GOOD_DIR = "last-good-souls"


@dataclass(frozen=True)
class SoulMeta:
    """The YAML front matter a soul file may carry (:func:`front_matter` checks it)."""

    name: str | None = None
    title: str | None = None
    emoji: str | None = None
    model: str | None = None
    temperature: float | None = None  # 0 to 2
    tools: tuple[str, ...] | None = None  # a list, or one comma-separated string
    consults: tuple[str, ...] = ()
    thinking: Thinking | None = None  # off, low, medium or high


_META_KEYS = tuple(f.name for f in fields(SoulMeta))


def _thinking(value: object) -> Thinking | None:
    try:
        return Thinking.of(value)
    except ValueError:
        return None


def _listed(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def front_matter(loaded: dict[Any, Any], what: str) -> SoulMeta:
    """The front matter as :class:`SoulMeta`; :class:`FileProblem` naming every bad key.

    Plain front matter (known keys, text where text goes, a number from 0 to 2 for the
    temperature) is read here; anything else goes to the pydantic model, which decides
    (``temperature: "0.5"`` is fine) and words the problems: a soul read by ``sabha souls``
    or a turn imports no pydantic for it."""
    text_keys = ("name", "title", "emoji", "model")
    temperature = loaded.get("temperature")
    tools = loaded.get("tools")
    consults = _listed(loaded.get("consults", ()))
    plain = (all(isinstance(k, str) and k in _META_KEYS for k in loaded)
             and all(loaded.get(k) is None or isinstance(loaded[k], str) for k in text_keys)
             and (temperature is None or (isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
                                          and math.isfinite(temperature) and 0 <= temperature <= 2))
             and (tools is None or _listed(tools) is not None) and consults is not None
             and (loaded.get("thinking") is None or _thinking(loaded["thinking"]) is not None))
    if plain and consults is not None:  # (consults: for mypy, checked in plain)
        thinking = loaded.get("thinking")
        return SoulMeta(**{k: loaded.get(k) for k in text_keys},
                        temperature=None if temperature is None else float(temperature),
                        tools=None if tools is None else _listed(tools), consults=consults,
                        thinking=None if thinking is None else Thinking.of(thinking))
    return _validated(loaded, what)


def _validated(loaded: dict[Any, Any], what: str) -> SoulMeta:
    from pydantic import ValidationError

    try:
        checked = _pydantic_meta().model_validate(loaded)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'front matter'}: {err['msg']}" for err in exc.errors()
        )
        raise FileProblem(f"{what}: bad front matter ({problems}); allowed keys: {', '.join(_META_KEYS)}") from exc
    return SoulMeta(**{k: getattr(checked, k) for k in _META_KEYS})


@cache
def _pydantic_meta() -> Any:
    """The pydantic model of :class:`SoulMeta`, built the first time front matter is not plain."""
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class SoulMetaModel(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        name: str | None = None
        title: str | None = None
        emoji: str | None = None
        model: str | None = None
        temperature: float | None = Field(None, ge=0, le=2)
        tools: tuple[str, ...] | None = None
        consults: tuple[str, ...] = ()
        thinking: Thinking | None = None

        @field_validator("thinking", mode="before")
        @classmethod
        def _thinking(cls, value: Any) -> Any:
            return value if value is None else Thinking.of(value)

        @field_validator("consults", "tools", mode="before")
        @classmethod
        def _listify(cls, value: Any) -> Any:
            if isinstance(value, str):
                return tuple(v.strip() for v in value.split(",") if v.strip())
            return value

    return SoulMetaModel


@dataclass(frozen=True)
class Soul:
    """One parsed soul: front matter fields, body text and a short content hash."""

    meta: SoulMeta
    body: str
    version: str

    @property
    def text(self) -> str:
        """The personality text injected into the system prompt."""
        return self.body


def parse_soul(data: bytes, *, what: str = "soul file") -> Soul:
    """Parse soul file bytes. Raises :class:`FileProblem` with a reason a person can act on."""
    text = decode_text(data, max_bytes=MAX_SOUL_BYTES, what=what)
    meta = SoulMeta()
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is None:
            raise FileProblem(f"{what}: front matter starts with '---' but has no closing '---' line")
        raw = "".join(lines[1:end])
        try:
            loaded = _front_matter_yaml(raw) if raw.strip() else {}
        except yaml.YAMLError as exc:
            raise FileProblem(f"{what}: front matter is not valid YAML: {yaml_problem(exc, first_line=2)}") from exc
        if not isinstance(loaded, dict):
            raise FileProblem(f"{what}: front matter must be a YAML mapping of key: value lines")
        meta = front_matter(loaded, what)
        body = "".join(lines[end + 1 :])
    if not body.strip():
        raise FileProblem(f"{what}: has front matter but no personality text")
    version = hashlib.sha256(data).hexdigest()[:12]
    return Soul(meta=meta, body=body.strip() + "\n", version=version)


#: libyaml's safe loader when PyYAML was built with it (a soul's front matter in ~0.05 ms, not ~1 ms).
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)


def _front_matter_yaml(raw: str) -> Any:
    """``raw`` as YAML, by libyaml when it can; what libyaml refuses is read again by the
    pure-Python parser, which accepts it or raises the error :func:`yaml_problem` words as before."""
    if _FAST_LOADER is not None:
        try:
            return yaml.load(raw, Loader=_FAST_LOADER)  # a safe loader
        except yaml.YAMLError:
            pass
    return yaml.safe_load(raw)


def yaml_problem(exc: yaml.YAMLError, *, first_line: int = 1) -> str:
    """A YAML error in words a person reads: what is wrong and where (``first_line``: the file's
    line number of the text's first line), without PyYAML's ``"<unicode string>"`` and caret."""
    problem: str | None = getattr(exc, "problem", None)
    if not problem:
        return " ".join(str(exc).split()).replace('in "<unicode string>", ', "")
    problem = problem.replace("'<stream end>'", "the end of the front matter").replace(
        "'<document end>'", "the end of the front matter")
    text = problem
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        text += f" at line {mark.line + first_line}, column {mark.column + 1}"
    context, where = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and where is not None:
        text += f" ({context.removeprefix('while parsing ')} starts at line {where.line + first_line}, " \
                f"column {where.column + 1})"
    return text


@dataclass(frozen=True)
class AgentProfile:
    """Everything a turn needs to know about a role: identity, model and its soul."""

    role: str
    name: str
    title: str
    emoji: str
    model: str | None
    tools: tuple[str, ...] | None
    consults: tuple[str, ...]
    soul: Soul
    soul_path: Path
    source: str  # "workspace" or "built-in default"
    temperature: float | None = None  # None: the provider's default
    thinking: Thinking | None = None  # None: llm.thinking

    @property
    def label(self) -> str:
        """``<emoji> <Name>``, the prefix of every reply."""
        return f"{self.emoji} {self.name}".strip()


@dataclass(frozen=True)
class SoulStatus:
    """One line of ``sabha souls``: a role, its file, the version in use and any error."""

    role: str
    path: Path
    version: str | None
    source: str
    error: str | None


_FALLBACK_EMOJI = "🪑"


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths are one file (a workspace that is the shipped one has no other default)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _soul_file(path: Path, root: Path, label: str, *, shipped: bool = False) -> WatchedFile[Soul]:
    """A watched soul file; ``shipped`` (Sabha's own default souls) may be hard links (an installer's cache)."""

    def parse(data: bytes) -> Soul:
        return parse_soul(data, what=path.name)

    return WatchedFile(path, parse, label=label, root=root, max_bytes=MAX_SOUL_BYTES, allow_hard_links=shipped)


class SoulStore:
    """Serves each role's current soul; see the module docstring."""

    def __init__(self, workspace: Path, roster: RosterSpec, *, keep_dir: Path | None = None,
                 remember: bool = True, observers: Iterable[Callable[[str, str], None]] = ()) -> None:
        self.workspace = workspace.resolve()
        self.roster = roster
        self.keep_dir = keep_dir
        self.remember = remember
        self._kept: dict[str, str] = {}  # role -> the version last copied to keep_dir
        self._last_good: dict[str, WatchedFile[Soul]] = {}
        self._files: dict[str, WatchedFile[Soul]] = {}
        self._defaults: dict[str, WatchedFile[Soul]] = {}
        self._default_root = default_workspace_dir()
        self._folder = self.workspace / roster_folder(roster.name)
        self._announced_fallback: set[str] = set()
        # Told ("reloaded" | "load_error", role) by refresh_all (the watcher); the daemon's metrics plug in here.
        self.observers: list[Callable[[str, str], None]] = list(observers)
        self._errors_seen: dict[str, str] = {}
        self._roles_seen: tuple[int | None, tuple[str, ...]] | None = None
        self._roles_step: object | None = None
        # The profiles built in the look under way (step_token): routing, the prompt and the tools ask for them
        # several times a turn, and the files are looked at once per look anyway.
        self._profiles_seen: dict[str, AgentProfile] = {}
        self._profiles_step: object | None = None
        # The profile last built per role and what it was built from (the soul version in use, its source and
        # path, the roster): a look that finds the same soul serves the same profile, built once per change.
        self._profiles_built: dict[str, tuple[tuple[object, ...], AgentProfile]] = {}
        #: Profiles built so far (a count for tests: one per role and change of its soul or the roster).
        self.profile_builds = 0
        # Validate configured paths now so a bad soul_file fails at start-up.
        for role in self.configured_roles():
            self._file_for(role)

    # -- roles -------------------------------------------------------------------

    def configured_roles(self) -> list[str]:
        """``general`` plus the roster's configured specialists, in roster order."""
        return [GENERAL, *[r for r in self.roster.specialists if r != GENERAL]]

    def roles(self) -> list[str]:
        """Roles available now: configured ones plus soul files added to the roster folder.

        The folder is listed again only when its modification time changed (a file added,
        removed or renamed in it): routing asks for the roles several times per message.
        """
        if self.roster.single:  # the seed's single-agent setup: the chair alone, whatever the folder holds
            return self.configured_roles()
        step = step_token()  # looked at once per step of the event loop, like the soul files themselves
        if step is not None and step is self._roles_step and self._roles_seen is not None:
            return list(self._roles_seen[1])
        self._roles_step = step
        try:
            stamp: int | None = self._folder.stat().st_mtime_ns
        except OSError:
            stamp = None
        if self._roles_seen is not None and self._roles_seen[0] == stamp:
            return list(self._roles_seen[1])
        roles = self.configured_roles()
        if stamp is not None and self._folder.is_dir():
            for path in sorted(self._folder.glob(f"*{SOUL_SUFFIX}")):
                slug = path.name[: -len(SOUL_SUFFIX)]
                if is_role_slug(slug) and slug not in roles:
                    roles.append(slug)
        self._roles_seen = (stamp, tuple(roles))
        return roles

    # -- files -------------------------------------------------------------------

    def _file_for(self, role: str) -> WatchedFile[Soul]:
        watched = self._files.get(role)
        if watched is None:
            override = self.roster.override(role).soul_file
            candidates = soul_candidates(self.roster.name, role)
            relative = override or str(next((c for c in candidates if (self.workspace / c).exists()), candidates[0]))
            # Checked here so a bad soul_file fails at start-up, and again on every read
            # (WatchedFile): the file may be swapped for a symlink while Sabha runs.
            resolve_inside(self.workspace, relative, what=f"soul file for role {role!r}")
            watched = _soul_file(self.workspace / relative, self.workspace, f"soul[{role}]")
            self._files[role] = watched
        return watched

    def _default_for(self, role: str) -> WatchedFile[Soul] | None:
        if role not in self._defaults:
            candidates = soul_candidates(self.roster.name, role)
            name = next((c for c in candidates if (self._default_root / c).exists()), candidates[0])
            self._defaults[role] = _soul_file(self._default_root / name, self._default_root, f"default soul[{role}]",
                                              shipped=True)
        watched = self._defaults[role]
        return watched if watched.path.exists() else None

    def _resolve(self, role: str) -> tuple[Soul | None, str, str | None, Path]:
        try:
            watched = self._file_for(role)
        except PathEscapeError as exc:
            # A soul file added while running that links outside the workspace.
            if role not in self._announced_fallback:
                self._announced_fallback.add(role)
                log.error("soul[%s]: %s; the role is unavailable", role, exc)
            return None, "rejected", str(exc), self.workspace / default_soul_path(self.roster.name, role)
        state = watched.state()
        if state.value is not None:
            self._announced_fallback.discard(role)
            self._keep(role, watched.path, state.value)
            return state.value, "workspace", state.error, watched.path
        error = state.error or (f"{watched.path} does not exist" if state.missing else None)
        kept = self._last_good_for(role, watched.path) if not state.missing else None
        if kept is not None:
            if role not in self._announced_fallback:
                self._announced_fallback.add(role)
                log.warning("soul[%s]: using the last good version %s (%s)", role, kept.version, error)
            return kept, "last good", error, watched.path
        default = self._default_for(role)
        if default is not None and not _same_file(default.path, watched.path) and default.get() is not None:
            if role not in self._announced_fallback:
                self._announced_fallback.add(role)
                log.warning("soul[%s]: using the built-in default soul (%s)", role, error)
            return default.get(), "built-in default", error, watched.path
        return None, "missing" if state.missing else "broken", error, watched.path

    def _kept_path(self, path: Path) -> Path | None:
        if self.keep_dir is None:
            return None
        try:
            return self.keep_dir / path.relative_to(self.workspace)
        except ValueError:
            return None

    def _keep(self, role: str, path: Path, soul: Soul) -> None:
        """Copy the version now live to ``keep_dir`` (once per version; never from a read-only store)."""
        if not self.remember or self._kept.get(role) == soul.version:
            return
        target = self._kept_path(path)
        if target is None or not self.keep_dir or not self.keep_dir.parent.is_dir():
            return  # no data dir yet: nothing of this board is stored anywhere
        try:
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest()[:12] != soul.version:
                return  # edited again since it loaded: the next load copies that version
            if not target.is_file() or target.read_bytes() != data:
                target.parent.mkdir(parents=True, exist_ok=True)
                scratch = target.with_name(f".{target.name}.tmp")
                scratch.write_bytes(data)
                os.replace(scratch, target)
            self._kept[role] = soul.version
        except OSError as exc:
            log.warning("soul[%s]: could not keep a copy of version %s in %s (%s)", role, soul.version,
                        self.keep_dir, exc.strerror or exc)

    def _last_good_for(self, role: str, path: Path) -> Soul | None:
        target = self._kept_path(path)
        if target is None or self.keep_dir is None:
            return None
        watched = self._last_good.get(role)
        if watched is None or watched.path != target:
            watched = _soul_file(target, self.keep_dir, f"last good soul[{role}]")
            self._last_good[role] = watched
        return watched.get() if target.exists() else None

    def has(self, role: str) -> bool:
        """True when ``role`` is available now and has a usable soul."""
        return role in self.roles() and self._resolve(role)[0] is not None

    def profile(self, role: str) -> AgentProfile:
        """The current profile of ``role``; raises KeyError when it has no usable soul. Built once per look at
        the files (:func:`~board.workspace.files.step_token`: a turn, or a step of the event loop): an edit
        shows from the next look on, as the files themselves do."""
        step = step_token()
        if step is None or step is not self._profiles_step:
            self._profiles_seen, self._profiles_step = {}, step
        elif (seen := self._profiles_seen.get(role)) is not None:
            return seen
        built = self._build_profile(role)
        if step is not None:
            self._profiles_seen[role] = built
        return built

    def _build_profile(self, role: str) -> AgentProfile:
        if role not in self.roles():
            raise KeyError(f"unknown role {role!r}; roles: {', '.join(self.roles())}")
        soul, source, error, path = self._resolve(role)
        if soul is None:
            raise KeyError(f"role {role!r} has no usable soul file ({error})")
        made_of = (soul, source, path, self.roster)
        built = self._profiles_built.get(role)
        if built is not None and built[0][0] is soul and built[0][1:] == made_of[1:]:
            return built[1]  # the same soul object: nothing a profile is made of changed
        self.profile_builds += 1
        profile = self._make_profile(role, soul, source, path)
        self._profiles_built[role] = (made_of, profile)
        return profile

    def _make_profile(self, role: str, soul: Soul, source: str, path: Path) -> AgentProfile:
        override = self.roster.override(role)
        meta = soul.meta
        return AgentProfile(
            role=role,
            name=override.name or meta.name or role.capitalize(),
            title=meta.title or "",
            emoji=override.emoji or meta.emoji or _FALLBACK_EMOJI,
            model=override.model or meta.model,
            temperature=override.temperature if override.temperature is not None else meta.temperature,
            thinking=override.thinking or meta.thinking,
            tools=override.tools if override.tools is not None else meta.tools,
            consults=meta.consults,
            soul=soul,
            soul_path=path,
            source=source,
        )

    def profiles(self) -> list[AgentProfile]:
        """Profiles of every available role with a usable soul."""
        result = []
        for role in self.roles():
            try:
                result.append(self.profile(role))
            except KeyError:
                continue
        return result

    def status(self) -> list[SoulStatus]:
        """What ``sabha souls`` prints: one entry per role."""
        rows = []
        for role in self.roles():
            soul, source, error, path = self._resolve(role)
            rows.append(SoulStatus(role, path, soul.version if soul else None, source, error))
        return rows

    def refresh_all(self) -> list[str]:
        """Stat every soul file now; returns the roles whose soul changed."""
        changed = []
        for role in self.roles():
            watched = self._files.get(role)
            before = watched.held if watched else None  # not get(): that would re-read the file already
            self._resolve(role)
            watched = self._files.get(role)
            after = watched.get() if watched else None
            if after is not None and (before is None or before.version != after.version):
                changed.append(role)
                log.info("soul[%s]: loaded version %s from %s", role, after.version, watched.path)  # type: ignore[union-attr]
                if before is not None:  # a new version replaced a live one (not the first load)
                    self._tell("reloaded", role)
            error = watched.state().error if watched is not None else None
            if error is not None and self._errors_seen.get(role) != error:
                self._tell("load_error", role)
            if error is None:
                self._errors_seen.pop(role, None)
            else:
                self._errors_seen[role] = error
        return changed

    def _tell(self, event: str, role: str) -> None:
        for observer in list(self.observers):
            try:
                observer(event, role)
            except Exception:
                log.exception("soul observer %r failed", observer)

    async def watch(self, stop: asyncio.Event) -> None:
        """Apply soul edits as they are saved until ``stop`` is set (uses watchfiles)."""
        from watchfiles import awatch

        self.refresh_all()
        if not self.workspace.is_dir():
            log.warning("souls: workspace %s does not exist; not watching it", self.workspace)
            return
        async for _changes in awatch(self.workspace, stop_event=stop, recursive=True):
            self.refresh_all()
