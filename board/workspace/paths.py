"""The workspace folder: where it comes from, how it is copied, and path safety.

The default workspace (souls, AGENTS.md, USER.md, templates) ships in the repo as
``workspace/`` and inside the wheel as ``board/_default_workspace``. Paths that come
from config or users are resolved with :func:`resolve_inside`, which refuses anything
that would leave its folder (``..``, absolute paths, symlinks pointing out).
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = [
    "PathEscapeError",
    "copy_default_workspace",
    "default_workspace_dir",
    "resolve_inside",
]


class PathEscapeError(ValueError):
    """A path from config or a user points outside the folder it must stay in."""


def default_workspace_dir() -> Path:
    """The workspace shipped with Sabha (package data, else the repo's ``workspace/``)."""
    packaged = _package_dir() / "_default_workspace"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "workspace"


def _package_dir() -> Path:
    """The ``board`` package's folder: beside its ``__init__`` as pip installs it, else as
    :mod:`importlib.resources` finds it (not imported otherwise: with zipfile and tempfile it
    costs a turn ~4 ms of start-up)."""
    import board

    here = Path(board.__file__).resolve().parent if board.__file__ else None
    if here is not None and here.is_dir():
        return here
    from importlib import resources

    return Path(str(resources.files("board")))


def resolve_inside(root: Path, relative: str | Path, *, what: str = "path") -> Path:
    """Resolve ``relative`` against ``root`` and insist the result stays inside ``root``.

    Raises :class:`PathEscapeError` naming ``what`` when it would escape.
    """
    root_resolved = root.resolve()
    candidate = Path(relative)
    if candidate.is_absolute():
        raise PathEscapeError(
            f"{what} {str(relative)!r} is absolute; give a path relative to the workspace {root_resolved}"
        )
    resolved = (root_resolved / candidate).resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise PathEscapeError(
            f"{what} {str(relative)!r} points outside the workspace {root_resolved}; "
            "keep soul files inside the workspace folder"
        )
    return resolved


def copy_default_workspace(dest: Path, *, overwrite: bool = False) -> list[Path]:
    """Copy the default workspace into ``dest``; existing files are kept unless ``overwrite``.

    Returns the files written.
    """
    source = default_workspace_dir()
    written: list[Path] = []
    for src in sorted(source.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        target = dest / src.relative_to(source)
        if target.exists() and not overwrite:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        written.append(target)
    return written
