"""Building blocks of config sections, shared by :mod:`bot.config.sections` and the
sections other packages own (the channels', the intake's, the web pages')."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["StrictModel", "base_url", "blank_is_unset", "section"]


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are errors.

    ``defer_build``: a section's validator is built the first time it validates, not when
    its class is defined. Validating the whole file builds ``Config``'s schema once, with
    every section inside it, instead of a schema per section at import (most of what
    importing the config cost, and every command pays it)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)


def section() -> Any:
    """The field of a nested section that, left out, takes all its own defaults.

    The default is an empty mapping that the parent validates (``validate_default``) like a
    section written as ``{}``: through the parent's schema, so the section's own validator is
    never built (``default_factory=TheSection`` would build one per section just to make its
    default)."""
    return Field(default_factory=dict)


def _blank_to_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


def blank_is_unset(*fields: str) -> Any:
    """A validator for ``fields``: a blank string (an unset ``${VAR}``) counts as not set."""
    return field_validator(*fields, mode="before")(classmethod(lambda cls, value: _blank_to_none(value)))


def base_url(value: str, example: str) -> str:
    """An endpoint's base URL without the trailing slash; ValueError (naming ``example``)
    unless it is http(s). Every external endpoint is configurable so a local server can
    stand in for it."""
    value = value.strip().rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"must be an http(s) URL such as {example}")
    return value
