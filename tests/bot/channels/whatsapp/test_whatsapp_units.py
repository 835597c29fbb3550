"""WhatsApp pieces on their own: the config section, signatures, formatting and splitting, error codes."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest

from bot.channels.whatsapp.config import WhatsAppSection
from bot.channels.whatsapp.format import MAX_BODY, split_text, to_whatsapp
from bot.channels.whatsapp.inbound import SignatureProblem, signature_problem
from bot.channels.whatsapp.limits import ErrorClass, classify
from bot.config import ConfigError
from bot.config.load import load_config


def test_the_section_is_off_by_default_and_its_defaults_are_as_documented() -> None:
    section = WhatsAppSection()
    assert not section.enabled
    assert (section.graph_base_url, section.api_version, section.webhook_path, section.access.value) == \
        ("https://graph.facebook.com", "v23.0", "/whatsapp/webhook", "allowlist")


def test_a_missing_secret_is_a_config_error_naming_the_key_and_the_variable(tmp_path: Path) -> None:
    path = tmp_path / "sabha.yaml"
    path.write_text('whatsapp:\n  phone_number_id: "123"\n  access_token: ${WHATSAPP_ACCESS_TOKEN}\n'
                    "  app_secret: ${WHATSAPP_APP_SECRET:-}\n  verify_token: v\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={"WHATSAPP_ACCESS_TOKEN": "t"})
    assert "app_secret (export WHATSAPP_APP_SECRET)" in str(err.value) and str(path) in str(err.value)


def test_numbers_are_normalised_and_nonsense_is_refused() -> None:
    section = WhatsAppSection(allowed_numbers=["+1 (555) 000-1111", "US.13491208655302741918"])
    assert section.allowed_numbers == ["15550001111", "US.13491208655302741918"]
    with pytest.raises(ValueError, match="neither a phone number"):
        WhatsAppSection(allowed_numbers=["bob"])
    with pytest.raises(ValueError, match="numeric phone number id"):
        WhatsAppSection(phone_number_id="+1 555")


def test_signatures_are_checked_on_the_raw_bytes() -> None:
    body = b'{"object":"whatsapp_business_account","entry":[]}'
    good = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert signature_problem(body, good, b"s3cret") is None
    assert signature_problem(body, None, b"s3cret") is SignatureProblem.MISSING
    assert signature_problem(body, good, b"other") is SignatureProblem.MISMATCH
    assert signature_problem(body + b" ", good, b"s3cret") is SignatureProblem.MISMATCH


def test_markdown_becomes_whatsapp_formatting() -> None:
    text = to_whatsapp("# Plan\n**bold**, __also__, *it*, ~~no~~, `c**o**de`\n\n* a\n+ b\n1. c\n\n"
                       "[docs](https://example.com)\n\n```\nx = **y**\n```")
    assert text.splitlines()[0] == "*Plan*"
    assert "*bold*, *also*, _it_, ~no~, `c**o**de`" in text
    assert "- a\n- b\n1. c" in text and "docs (https://example.com)" in text and "x = **y**" in text
    assert to_whatsapp("an unmatched ** and * and _ stay readable") == "an unmatched  and * and _ stay readable"


def test_splitting_prefers_paragraphs_then_sentences_then_words() -> None:
    paragraphs = ["A" * 3000, "B" * 3000]
    assert split_text("\n\n".join(paragraphs)) == paragraphs
    sentences = " ".join(f"Sentence {i} is short." for i in range(400))
    pieces = split_text(sentences)
    assert all(len(p) <= MAX_BODY for p in pieces) and all(p.endswith(".") for p in pieces)
    assert " ".join(pieces) == sentences
    word = "x" * (MAX_BODY * 2 + 5)
    assert [len(p) for p in split_text(word)] == [MAX_BODY, MAX_BODY, 5]


@pytest.mark.parametrize(("code", "kind"), [
    (130429, ErrorClass.CHANNEL_LIMIT), (131056, ErrorClass.PAIR_LIMIT), (4, ErrorClass.TRANSIENT),
    (80007, ErrorClass.TRANSIENT), (131000, ErrorClass.TRANSIENT), (1, ErrorClass.TRANSIENT),
    (2, ErrorClass.TRANSIENT), (131016, ErrorClass.TRANSIENT), (131047, ErrorClass.WINDOW_CLOSED),
    (131026, ErrorClass.PERMANENT), (131048, ErrorClass.PERMANENT), (131062, ErrorClass.PERMANENT),
    (368, ErrorClass.PERMANENT), (100, ErrorClass.PERMANENT), (190, ErrorClass.PERMANENT),
    (131999, ErrorClass.PERMANENT),
])
def test_error_codes_branch_as_the_issue_lists(code: int, kind: ErrorClass) -> None:
    assert classify(code, 400) is kind


def test_an_error_without_a_code_retries_only_on_5xx_or_429() -> None:
    assert classify(None, 502) is ErrorClass.TRANSIENT and classify(None, 429) is ErrorClass.TRANSIENT
    assert classify(None, 404) is ErrorClass.PERMANENT
