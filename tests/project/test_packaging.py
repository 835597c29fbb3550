"""What a plain ``pip install`` of Sabha's wheel brings: the package data ``sabha init`` needs.

The wheel is built from this checkout (``pip wheel``: hatchling, the build backend, comes from
the package index pip is set up with) and installed into a throwaway venv with no access to
the checkout; the dependencies are borrowed from the running interpreter's environment
through a ``.pth`` file, so nothing is downloaded for them. Then ``sabha init`` runs from
that venv, as a person who installed Sabha with pip would run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def test_a_pip_installed_sabha_init_writes_config_example_yaml(tmp_path: Path) -> None:
    """Issue 22 item 18: the config ``sabha init`` writes (and every config error) points to
    ``config.example.yaml`` beside it; a wheel install writes it there too, the repository's file."""
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(REPO)], tmp_path)
    [wheel] = wheels.glob("sabha-*.whl")

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
          str(wheel)], tmp_path)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path).stdout.strip())
    (site / "zz_borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SABHA_", "PYTHON"))}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "xdg"))
    where = _run([str(python), "-c", "import bot; print(bot.__file__)"], tmp_path, env).stdout.strip()
    assert Path(where).is_relative_to(site), f"sabha must come from the wheel, not {where}"

    board = tmp_path / "board"
    _run([str(env_dir / "bin" / "sabha"), "init", str(board)], tmp_path, env)
    example = board / "config.example.yaml"
    assert example.is_file(), sorted(p.name for p in board.iterdir())
    assert example.read_bytes() == (REPO / "config.example.yaml").read_bytes()
    assert "config.example.yaml beside this file" in (board / "sabha.yaml").read_text(encoding="utf-8")
