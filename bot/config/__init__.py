"""The config file (``sabha.yaml``) and its three readers, which must agree.

- :mod:`bot.config.file`: the file itself before any validation (which file, its YAML, ``${VAR}``
  references), the defaults and secret-key pattern every reader shares
- :mod:`bot.config.load`: the whole reading, validated by the pydantic models (:func:`load_config`)
- :mod:`bot.config.layout`: the fast path of ``sabha souls`` (workspace, data dir, roster, model)
- :mod:`bot.config.plain`: the fast path of ``sabha ask`` (a file that sets only what ``sabha init``
  writes, read without the models)
- :mod:`bot.config.loaded`: :class:`LoadedConfig`, what every reading gives the board
- :mod:`bot.config.sections`: the models (:class:`Config` and its sections), built from
  :mod:`bot.config.base`; the sections of board features are :mod:`bot.config.knowledge`,
  :mod:`bot.config.media` and :mod:`bot.config.people` (a channel, the intake and the web pages
  keep their own section in their package's ``config.py``)
- :mod:`bot.config.pydantic_plugins`: pydantic's plugin discovery, skipped when there is none

This face imports nothing heavy (no pydantic, no config models): ``sabha ask`` and ``sabha souls``
import it and must not pay for the models. It re-exports the light parts other packages use; the
whole reading and the models are imported from their modules (``from bot.config.load import
load_config``, ``from bot.config.sections import Config``), and so is the plain reading
(``from bot.config.plain import read_plain``: its defaults are some twenty dataclasses, which
``sabha souls`` need not build).
"""

from bot.config.file import (
    CONFIG_ENV,
    DEFAULT_CONFIG_NAME,
    KNOWN_PROVIDERS,
    PROVIDER_KEY_ENV,
    PROVIDER_KEY_ENV_ALSO,
    ConfigError,
    ConfigLocation,
    FoundBy,
    find_config,
    locate_config,
    personal_board_dir,
)
from bot.config.layout import BoardLayout, layout_of, read_layout
from bot.config.loaded import LoadedConfig

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG_NAME",
    "KNOWN_PROVIDERS",
    "PROVIDER_KEY_ENV",
    "PROVIDER_KEY_ENV_ALSO",
    "BoardLayout",
    "ConfigError",
    "ConfigLocation",
    "FoundBy",
    "LoadedConfig",
    "find_config",
    "layout_of",
    "locate_config",
    "personal_board_dir",
    "read_layout",
]
