"""``sabha doctor``'s recall line (issue 43): by words only while ``memory.embedding_model`` is unset; by meaning
too when it is set and sqlite-vec loads (or the PostgreSQL server has pgvector); a warning naming what to do when
a model is set but vectors cannot be kept (a PostgreSQL without pgvector) or the model has no key. A bad model
name is a config error naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from tests.support.pg import throwaway_cluster
from tests.support.vectors import pgvector_binaries


def doctor(root: Path, capsys: pytest.CaptureFixture[str], *lines: str) -> tuple[int, str]:
    main(["init", str(root)])
    config = root / "sabha.yaml"
    config.write_text("workspace: ./workspace\ndata_dir: ./sessions\n" + "\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    code = main(["doctor", "--offline", "--config", str(config)])
    return code, capsys.readouterr().out


def test_recall_is_by_words_until_an_embedding_model_is_set(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(tmp_path, capsys)
    assert code == 0, out
    assert "recall: by words only (set memory.embedding_model to recall by meaning too)" in out, out


def test_with_a_model_and_sqlite_vec_recall_is_by_meaning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABHA_TEST_EMBED_KEY", "sk-embed-secret")
    code, out = doctor(tmp_path, capsys, "memory:", "  embedding_model: openai:text-embedding-3-small",
                       "  embedding_api_key: ${SABHA_TEST_EMBED_KEY}")
    assert code == 0, out
    assert "recall: by meaning and by words: openai:text-embedding-3-small at its provider's endpoint, vectors " \
           "kept with sqlite-vec v" in out, out
    assert "sk-embed-secret" not in out


def test_a_model_without_a_key_is_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    _, out = doctor(tmp_path, capsys, "memory:", "  embedding_model: gemini:gemini-embedding-001")
    assert "WARN  recall: gemini:gemini-embedding-001 has no API key" in out, out
    assert "export GEMINI_API_KEY or set memory.embedding_api_key" in out


def test_on_postgresql_without_pgvector_recall_stays_lexical_and_doctor_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with throwaway_cluster() as server:  # Debian's PostgreSQL 15: no pgvector
        _, out = doctor(tmp_path, capsys, "state:", f"  url: {server.url()}", "memory:",
                        "  embedding_model: openai:text-embedding-3-small")
    assert "WARN  recall: by words only, although memory.embedding_model is openai:text-embedding-3-small: the " \
           "PostgreSQL server has no pgvector extension" in out, out
    assert "fix: install pgvector on the PostgreSQL server" in out


def test_on_postgresql_with_pgvector_recall_is_by_meaning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with throwaway_cluster(pgvector_binaries()) as server:
        _, out = doctor(tmp_path, capsys, "state:", f"  url: {server.url()}", "memory:",
                        "  embedding_model: openai:text-embedding-3-small")
    assert "OK    recall: by meaning and by words: openai:text-embedding-3-small at its provider's endpoint, " \
           "vectors kept with pgvector in the state database" in out, out


def test_a_model_that_is_not_provider_colon_name_is_a_config_error(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(tmp_path, capsys, "memory:", "  embedding_model: text-embedding-3-small")
    assert code == 1
    assert "memory.embedding_model" in out and "must be provider:model" in out, out
