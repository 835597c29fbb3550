"""``telemetry:`` in sabha.yaml: off by default, an endpoint that is no URL refused with what to write, header
values read from the environment and kept secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError
from bot.config.load import load_config
from bot.ops.logs import config_secrets


def test_telemetry_is_off_by_default(tmp_path: Path) -> None:
    config = tmp_path / "sabha.yaml"
    config.write_text("llm:\n  model: offline\n", encoding="utf-8")
    assert load_config(config, env={}).config.telemetry.enabled is False


def test_an_endpoint_that_is_no_url_says_what_to_write(tmp_path: Path) -> None:
    config = tmp_path / "sabha.yaml"
    config.write_text("telemetry:\n  enabled: true\n  endpoint: collector:4318\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"telemetry\.endpoint.*no http\(s\) URL; e\.g\. http://127\.0\.0\.1:4318"):
        load_config(config, env={})


def test_header_values_come_from_the_environment_and_are_secrets(tmp_path: Path) -> None:
    config = tmp_path / "sabha.yaml"
    config.write_text("telemetry:\n  enabled: true\n  headers:\n    authorization: Bearer ${OTLP_TOKEN}\n",
                      encoding="utf-8")
    loaded = load_config(config, env={"OTLP_TOKEN": "tok-123456789"}).config
    export = loaded.telemetry.export(instance="vm-1", version="0.1.0")
    assert export.headers == {"authorization": "Bearer tok-123456789"} and export.instance == "vm-1"
    assert "Bearer tok-123456789" in config_secrets(loaded)
    assert "tok-123456789" not in repr(loaded.telemetry)
