"""plan_lsh with large num_perm (issue 19): bounded memory, a capped weighted search, and the
reduced recall search equal to the exhaustive one."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import ConfigError
from neardup.index import lshplan as lsh
from neardup.index.lsh import MAX_WEIGHTED_PERM, plan_lsh


@pytest.mark.parametrize("num_perm", [7, 64, 200])
@pytest.mark.parametrize("threshold", [0.3, 0.7, 0.9])
def test_recall_search_equals_exhaustive(num_perm: int, threshold: float) -> None:
    bs, rs = lsh._all_plans(num_perm)
    reach = 1.0 - (1.0 - threshold**rs) ** bs
    ok = reach >= 0.9
    plan = plan_lsh(threshold, num_perm, method="recall", recall=0.9)
    if ok.any():
        fp, _ = lsh._rates_many(threshold, bs[ok], rs[ok])
        best = np.lexsort((bs[ok], fp))[0]
        assert (plan.bands, plan.rows) == (int(bs[ok][best]), int(rs[ok][best]))


def test_all_plans_lists_every_pair_in_order() -> None:
    bs, rs = lsh._all_plans(10)
    expected = [(b, r) for r in range(1, 11) for b in range(1, 10 // r + 1)]
    assert list(zip(bs.tolist(), rs.tolist(), strict=True)) == expected


def test_large_num_perm_recall_plan_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    rates = lsh._rates_many

    def spy(t: float, b: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seen.append(len(b))
        return rates(t, b, r)

    monkeypatch.setattr(lsh, "_rates_many", spy)
    plan = plan_lsh(0.8, 1 << 16, method="recall")
    assert plan.bands * plan.rows <= 1 << 16 and plan.recall_at_threshold >= 0.99
    assert max(seen) <= 1 << 16  # one candidate per rows value, not num_perm * ln(num_perm)


def test_rates_are_computed_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    bs, rs = lsh._all_plans(40)
    whole = lsh._rates_many(0.6, bs, rs)
    monkeypatch.setattr(lsh, "_BLOCK", 7)
    blocked = lsh._rates_many(0.6, bs, rs)
    assert all(np.array_equal(a, b) for a, b in zip(whole, blocked, strict=True))


def test_weighted_search_is_capped() -> None:
    with pytest.raises(ConfigError, match="--mode recall"):
        plan_lsh(0.8, MAX_WEIGHTED_PERM + 1, method="weighted")
    with pytest.raises(ConfigError):
        plan_lsh(0.8, (1 << 16) + 1, method="recall")


def test_cli_plan_large_num_perm() -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["plan", "-t", "0.8", "--num-perm", "65536"])
    assert ok.exit_code == 0, ok.output
    assert "bands=" in ok.output
    bad = runner.invoke(main, ["plan", "-t", "0.8", "--num-perm", "8192", "--mode", "weighted"])
    assert bad.exit_code == 1 and "--mode recall" in bad.output and "Traceback" not in bad.output
