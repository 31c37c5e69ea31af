"""The wheel ``make wheel`` builds, installed into a fresh virtual environment, runs the
README's Quick start (the ``make run`` commands) on its first use: with the compiled core in
place, no compile, no background process and nothing written outside the outputs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
MAKEFILE = ROOT / "Makefile"


def the_wheel() -> Path:
    wheels = sorted((ROOT / "dist").glob("neardup-*.whl"))
    if not wheels:
        pytest.skip("no wheel in dist/: `make wheel` builds it (`make test` does first)")
    return wheels[-1]


def run_commands() -> list[list[str]]:
    """The ``neardup`` lines of the Makefile's ``run`` target, as argument lists."""
    target = MAKEFILE.read_text(encoding="utf-8").split("\nrun:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in target.splitlines()[1:]]
    return [
        line.replace("$(VENV)/bin/neardup", "neardup").split()
        for line in lines
        if line.startswith("$(VENV)/bin/neardup")
    ]


@pytest.mark.slow
def test_wheel_installs_and_runs_the_quick_start(tmp_path: Path) -> None:
    wheel = the_wheel()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # the dependencies come from this environment's site-packages (no network in tests); a
    # path line in a .pth adds that folder but not the folder's own .pth files, so this
    # checkout's editable neardup stays out and the wheel's neardup is the one imported
    new_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (new_site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
    )
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NEARDUP_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PATH=f"{venv / 'bin'}:{env['PATH']}"
    )
    where = subprocess.run(
        [str(python), "-c", "import neardup, neardup._native; print(neardup.__file__)"],
        env=env,
        cwd=work,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert where.startswith(str(venv)), where
    commands = run_commands()
    assert len(commands) == 2
    outputs = []
    for command in commands:
        args = [str(ROOT / a) if a.startswith("examples/") else a for a in command[1:]]
        done = subprocess.run(
            [str(venv / "bin" / "neardup"), *args],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "compil" not in done.stderr.lower(), done.stderr
        outputs.append(done.stdout)
    assert re.search(r"cluster", outputs[0])
    assert "photo_bright.png" in outputs[1]
    assert sorted(p.name for p in work.iterdir()) == ["report.html"]
    assert list(home.rglob("*")) == []  # no cache, no compiled kernels, no logs
