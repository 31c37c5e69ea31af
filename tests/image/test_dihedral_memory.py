"""--dihedral costs bounded memory: at most 2x the peak RSS of the same run without it.

Each run is a fresh ``python -m neardup dedup`` whose peak RSS is read back by a launcher
process (``resource``'s ``ru_maxrss`` of its waited child, as benchmarks/e2e_bench.py does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
from PIL import Image

SRC = Path(__file__).resolve().parents[2] / "src"

#: Runs argv[2:] and writes its peak RSS (KiB) to the file descriptor argv[1].
_LAUNCHER = """
import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
os.write(int(sys.argv[1]), f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}".encode())
"""


def _peak_rss_kib(args: list[str]) -> int:
    env = dict(os.environ)
    env.pop("NEARDUP_SMALL_INPUT", None)  # a small input runs without numba: a lean baseline
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    read_end, write_end = os.pipe()
    cmd = [sys.executable, "-m", "neardup", "dedup", *args, "-q"]
    proc = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCHER, str(write_end), *cmd],
        pass_fds=(write_end,),
        capture_output=True,
        env=env,
        check=False,
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        code, rss = fh.read().decode().split()
    assert proc.returncode == 0 and code == "0", proc.stderr.decode()[-2000:]
    return int(rss)


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Smooth random JPEGs, 24 of 320x240 pixels (15 Mpixel of transforms with --dihedral)."""
    d = tmp_path_factory.mktemp("dihedral_memory")
    rng = np.random.default_rng(7)
    for i in range(24):
        small = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
        im = Image.fromarray(small).resize((320, 240), Image.Resampling.BILINEAR)
        im.save(d / f"p{i:02d}.jpg", quality=80)
    return d


@pytest.mark.parametrize("method", ["dhash", "phash"])
def test_dihedral_peak_rss_is_at_most_twice_the_plain_run(photos: Path, method: str) -> None:
    plain = _peak_rss_kib([str(photos), "-m", method])
    turned = _peak_rss_kib([str(photos), "-m", method, "--dihedral"])
    assert turned <= 2 * plain, f"--dihedral peaked at {turned} KiB, without it {plain} KiB"
