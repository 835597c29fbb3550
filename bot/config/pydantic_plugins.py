"""pydantic's plugin discovery without :mod:`importlib.metadata` when no plugin is installed.

The first validator pydantic builds looks for plugins: ``pydantic.plugin._loader`` imports
:mod:`importlib.metadata` (with :mod:`email`, :mod:`zipfile`, :mod:`csv` ...) and reads the
entry points of every installed distribution, looking for the ``pydantic`` group. For
``sabha ask`` that is about 25 ms of a command that should start at once, and Sabha's config
has no use for plugins.

:func:`skip_plugin_discovery_when_none` makes the same search by hand: every ``*.dist-info``
and ``*.egg-info`` folder on :data:`sys.path` and its ``entry_points.txt``, for a
``[pydantic]`` section. Only when it can vouch that there is none (every path entry is a
folder or absent, no extra import hook provides distributions, plugins are not being
loaded already) does it give pydantic a loader that returns no plugins, which is what
pydantic's own would have found. Anything it cannot vouch for (a plugin, a zipped path
entry, a finder of its own) leaves pydantic's discovery as it is.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

__all__ = ["LOADER", "plugins_declared", "skip_plugin_discovery_when_none"]

#: pydantic's plugin loader module, imported by the first validator it builds.
LOADER = "pydantic.plugin._loader"
_GROUP = "[pydantic]"
_STANDARD_FINDERS = frozenset({"BuiltinImporter", "FrozenImporter", "PathFinder"})


def plugins_declared(paths: list[str] | None = None) -> bool:
    """True unless no distribution on ``paths`` (default :data:`sys.path`) can declare a pydantic
    plugin: one does, or a path entry or import hook is of a kind this search cannot read."""
    if any(_name(finder) not in _STANDARD_FINDERS and hasattr(finder, "find_distributions")
           for finder in sys.meta_path):
        return True
    for entry in sys.path if paths is None else paths:
        folder = Path(entry or ".")
        if not folder.exists():
            continue
        if not folder.is_dir():
            return True  # a zip file: its distributions are not read here
        try:
            with os.scandir(folder) as found:
                for item in found:
                    if item.name.endswith((".dist-info", ".egg-info")) and _declares_plugin(Path(item.path)):
                        return True
        except OSError:
            return True
    return False


def _name(finder: object) -> str:
    """A finder's class name (the standard ones sit on :data:`sys.meta_path` as classes)."""
    return finder.__name__ if isinstance(finder, type) else type(finder).__name__


def _declares_plugin(dist: Path) -> bool:
    try:
        text = (dist / "entry_points.txt").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return any(line.strip() == _GROUP for line in text.splitlines())


def skip_plugin_discovery_when_none() -> bool:
    """Before pydantic builds its first validator: when no plugin is installed (see the module
    docstring), let pydantic find none without importing :mod:`importlib.metadata`. True if it did."""
    if LOADER in sys.modules or plugins_declared():
        return False
    loader = types.ModuleType(LOADER, "pydantic's plugin loader: no distribution declares a pydantic plugin "
                                      f"(checked by {__name__})")
    loader.__dict__.update(PYDANTIC_ENTRY_POINT_GROUP="pydantic", _plugins={}, _loading_plugins=False,
                           get_plugins=lambda: ())
    sys.modules[LOADER] = loader
    return True
