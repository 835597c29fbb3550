"""Config loading: the messages a person sees when their YAML is wrong, and what works."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from bot.cli.main import main
from bot.config import ConfigError
from bot.config.load import load_config, parse_config


def write(tmp_path: Path, text: str, name: str = "sabha.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SABHA_CONFIG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    loaded = load_config(None)
    assert loaded.source is None
    assert loaded.config.llm.model == "offline"
    assert loaded.config.board.roster == "board"
    assert loaded.workspace == (tmp_path / "workspace").resolve()
    assert loaded.data_dir == (tmp_path / "sessions").resolve()


def test_unknown_key_names_file_and_key_path(tmp_path: Path) -> None:
    path = write(tmp_path, "board:\n  agents:\n    finance:\n      emojii: '💰'\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message
    assert "board.agents.finance.emojii: unknown key" in message


def test_bad_type_names_key_path_and_value(tmp_path: Path) -> None:
    path = write(tmp_path, "board:\n  history_messages: lots\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "board.history_messages" in str(err.value)
    assert "'lots'" in str(err.value)


def test_missing_env_var_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "llm:\n  model: ${SABHA_TEST_MODEL}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert "llm.model: environment variable SABHA_TEST_MODEL is not set" in str(err.value)


def test_env_interpolation_with_default_and_escape(tmp_path: Path) -> None:
    config = parse_config(
        "llm:\n  model: ${MODEL:-offline}\nboard:\n  agents:\n    finance:\n      name: '$${NOT_A_VAR} ${WHO}'\n",
        source="x",
        env={"WHO": "CFO"},
    )
    assert config.llm.model == "offline"
    assert config.board.agents["finance"].name == "${NOT_A_VAR} CFO"


def test_paths_are_relative_to_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf_dir = tmp_path / "etc"
    conf_dir.mkdir()
    path = conf_dir / "sabha.yaml"
    path.write_text("workspace: ws\ndata_dir: ../var/data\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    loaded = load_config(path)
    assert loaded.workspace == (conf_dir / "ws").resolve()
    assert loaded.data_dir == (tmp_path / "var" / "data").resolve()


def test_unknown_roster_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "board:\n  roster: senate\n"))
    assert "roster 'senate' is unknown" in str(err.value)


def test_yaml_syntax_error_has_a_line_number(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "llm:\n  model: [offline\n"))
    assert "not valid YAML at line" in str(err.value)


def test_named_config_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_cli_prints_config_errors_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "llm:\n  modle: offline\n", "custom.yaml")  # not ./sabha.yaml: only --config finds it
    monkeypatch.chdir(tmp_path)
    code = main(["souls", "--config", str(path)])  # --config after the subcommand
    err = capsys.readouterr().err
    assert code == 2
    assert "llm.modle: unknown key" in err
    assert "Traceback" not in err


def test_cli_config_before_subcommand_and_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "llm:\n  model: offline\n", "custom.yaml")  # not ./sabha.yaml: only --config finds it
    monkeypatch.chdir(tmp_path)
    code = main(["--config", str(path), "config", "check"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"# config: {path.resolve()}" in out
    assert "config OK" in out
    assert "model: offline" in out


def test_soul_path_escaping_workspace_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "workspace").mkdir()
    path = write(tmp_path, "board:\n  agents:\n    finance:\n      soul_file: ../../etc/passwd\n", "custom.yaml")
    monkeypatch.chdir(tmp_path)
    code = main(["--config", str(path), "config", "check"])
    err = capsys.readouterr().err
    assert code == 2
    assert "points outside the workspace" in err


def test_example_config_is_valid_and_complete() -> None:
    example = Path(__file__).resolve().parents[3] / "config.example.yaml"
    config = parse_config(example.read_text(encoding="utf-8"), source=str(example), env={})
    documented = example.read_text(encoding="utf-8")
    for section, model in config:
        assert f"{section}:" in documented
        if isinstance(model, BaseModel):
            for key in type(model).model_fields:
                assert f"{key}:" in documented, f"config.example.yaml does not document {section}.{key}"


def test_config_check_names_a_missing_api_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "llm:\n  model: anthropic:claude-sonnet-4-6\n  fallbacks: [openai:gpt-4o-mini]\n")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")
    assert main(["config", "check", "--config", str(path)]) == 1  # every answer of that model would fail
    out = capsys.readouterr().out
    assert ("# error: anthropic:claude-sonnet-4-6 needs an API key: export ANTHROPIC_API_KEY=... (keys are read "
            "from the environment, never from the file)") in out
    assert "openai:gpt-4o-mini needs" not in out
    assert "config OK" not in out and "config has 1 problem(s)" in out


def test_credentials_in_urls_are_masked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "llm:\n  providers:\n    openai:\n      base_url: http://user:hunter2@127.0.0.1:9/v1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["config", "check", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "hunter2" not in out and "http://***@127.0.0.1:9/v1" in out


def test_data_dir_that_is_a_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "data").write_text("not a folder")
    path = write(tmp_path, "data_dir: data\n")
    monkeypatch.chdir(tmp_path)
    for command in (["souls"], ["sessions", "list"], ["ask", "hi"]):
        assert main([*command, "--config", str(path)]) == 2
        err = capsys.readouterr().err
        assert "is a file, not a folder" in err and "Traceback" not in err


def test_the_owners_own_chat_comes_from_each_running_channels_config(tmp_path: Path) -> None:
    """Where a member's tool request reaches the owner before the owner has written (board.tools.consent):
    Telegram's first allowed user, WhatsApp's first allowed number, only for channels that run."""
    path = write(tmp_path, "telegram:\n  token: '123:abc'\n  allowed_user_ids: [42, 43]\n"
                           "whatsapp:\n  allowed_numbers: ['+1 555 000 1111']\n")
    assert load_config(path).board_settings().consent.owner_chats == (("telegram", "42"),)  # WhatsApp is not set up
    path = write(tmp_path, "telegram:\n  token: '123:abc'\n  allowed_user_ids: [42]\n"
                           "whatsapp:\n  phone_number_id: '999'\n  access_token: t\n  app_secret: s\n"
                           "  verify_token: v\n  allowed_numbers: ['+1 555 000 1111']\n")
    assert load_config(path).board_settings().consent.owner_chats == (("telegram", "42"),
                                                                       ("whatsapp", "15550001111"))
