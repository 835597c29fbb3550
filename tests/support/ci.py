"""What a test does when a real part it drives is missing here (PostgreSQL, chromium and its driver, nginx,
systemd-analyze ...): on a developer's machine it skips with the reason; on CI it FAILS with the same reason,
so a broken ``initdb`` or a failed ``apt-get install`` fails the build instead of silently skipping every
test that needs the part.

CI is told by the ``CI`` environment variable (GitHub Actions, GitLab CI and most others set ``CI=true``;
``.ci/run`` sets it when unset): any non-empty value other than ``false`` / ``0`` / ``no``.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["missing_part", "on_ci"]

_NOT_CI = {"", "0", "false", "no", "off"}


def on_ci(env: dict[str, str] | None = None) -> bool:
    """True when the tests run on CI (``CI`` set to a value other than false/0/no/off)."""
    value = (os.environ if env is None else env).get("CI", "")
    return value.strip().lower() not in _NOT_CI


def missing_part(reason: str) -> NoReturn:
    """Skip the test (a developer's machine) or fail it (CI): a real part it needs is missing; ``reason`` says
    which and how to install it."""
    if on_ci():
        pytest.fail(f"CI={os.environ.get('CI')!r} and a real part this test needs is missing: {reason}. "
                    "Install it (.ci/run does, as root) or fix its install; on CI a missing part fails instead of "
                    "skipping.", pytrace=False)
    pytest.skip(reason)
