"""The owner's web pages' settings (config ``web``), as the daemon uses them: a frozen value."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WebSettings"]


@dataclass(frozen=True)
class WebSettings:
    """What ``web:`` in the config sets (see config.example.yaml)."""

    enabled: bool = True
    session_ttl_s: float = 7 * 86400.0  # how long a login lasts (the signed cookie's expiry)
    link_ttl_s: float = 600.0  # how long a `sabha web link` link may be used (once)
    base_url: str | None = None  # the address the owner's browser uses (behind a proxy): printed links start with it
    login_attempts_per_minute: int = 10  # failed, per client address; more is answered 429
