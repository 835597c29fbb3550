"""Log format and redaction, unit by unit: text on a terminal, JSON under systemd (or when
configured), structured turn fields, and secrets masked in messages, arguments, extra
fields and tracebacks."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from bot.config.load import parse_config
from bot.ops.logs import REDACTOR, JsonFormatter, RedactingFilter, choose_format, config_secrets, protect_config, redact

SECRET = "sk-live-abcdefghijklmnop"


@pytest.fixture(autouse=True)
def clean_redactor() -> Iterator[None]:
    REDACTOR.clear()
    yield
    REDACTOR.clear()


def capture(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger(f"sabha.test.{id(stream)}")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_auto_is_json_under_systemd_and_text_on_a_terminal() -> None:
    assert choose_format("auto", {}) == "text"
    assert choose_format("auto", {"INVOCATION_ID": "abc"}) == "json"
    assert choose_format("auto", {"JOURNAL_STREAM": "8:1234"}) == "json"
    assert choose_format("text", {"INVOCATION_ID": "abc"}) == "text"
    assert choose_format("json", {}) == "json"


def test_config_accepts_the_format_and_refuses_others() -> None:
    assert parse_config("logging: {format: json}", source="t").logging.format == "json"
    assert parse_config("", source="t").logging.format == "auto"
    with pytest.raises(Exception, match=r"logging\.format"):
        parse_config("logging: {format: xml}", source="t")


def test_json_lines_carry_the_structured_turn_fields() -> None:
    logger, stream = capture(JsonFormatter())
    logger.info("turn role=%s", "finance", extra={"event": "turn", "channel": "telegram", "session_key": "main",
                                                   "role": "finance", "latency_ms": 12.5, "cost_usd": 0.001})
    record = json.loads(stream.getvalue())
    assert record["msg"] == "turn role=finance" and record["level"] == "INFO"
    assert record["channel"] == "telegram" and record["session_key"] == "main" and record["latency_ms"] == 12.5
    assert record["ts"].endswith("+00:00")


def test_secrets_are_masked_in_messages_arguments_extras_and_tracebacks() -> None:
    REDACTOR.add([SECRET])
    logger, stream = capture(logging.Formatter("%(message)s %(url)s"))
    logger.warning("calling with %s", f"Bearer {SECRET}", extra={"url": f"https://x/bot{SECRET}/getMe"})
    try:
        raise RuntimeError(f"rejected {SECRET}")
    except RuntimeError:
        logger.exception("failed", extra={"url": "-"})
    out = stream.getvalue()
    assert SECRET not in out and out.count("***") == 3, out
    assert "RuntimeError: rejected ***" in out


def test_url_encoded_secrets_are_masked_too() -> None:
    token = "123456:ABC-def_ghi"
    REDACTOR.add([token])
    assert redact("GET /bot123456%3AABC-def_ghi/getMe") == "GET /bot***/getMe"


def test_short_values_are_not_treated_as_secrets() -> None:
    REDACTOR.add(["abc", "", None])
    assert redact("abc abc") == "abc abc"


def test_every_secret_of_the_config_is_found() -> None:
    config = parse_config(
        "llm: {providers: {openai: {api_key: sk-openai-1234567}, anthropic: {api_key: sk-ant-7654321}}}\n"
        "telegram: {token: '1:telegram-token-xyz', webhook_secret: hook-secret-123, mode: webhook}\n",
        source="t", env={})
    found = set(config_secrets(config))
    assert {"sk-openai-1234567", "sk-ant-7654321", "1:telegram-token-xyz", "hook-secret-123"} <= found
    assert config_secrets({"nested": [{"token": "plain-token-123"}], "x": SecretStr("s3cret-value")}) == [
        "plain-token-123", "s3cret-value"]
    protect_config(config)
    assert redact("key sk-ant-7654321 here") == "key *** here"
