"""Print the table of docs/security.md: which canonicalizer setting defeats which disguise.

The measurements are those of ``tests/security/test_adversarial.py`` (the disguises and the
thresholds live in ``tests/security/adversarial_cases.py``). Run::

    python benchmarks/adversarial_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "security"))

import adversarial_cases


def main() -> None:
    """Print the Markdown table and the thresholds it uses."""
    print(adversarial_cases.table())
    print()
    print(
        f"caught = MinHash (128 slots) Jaccard >= {adversarial_cases.MINHASH_THRESHOLD} and "
        f"SimHash (64 bits) distance <= {adversarial_cases.SIMHASH_RADIUS}; J and d are measured "
        "between the original and the disguised copy."
    )


if __name__ == "__main__":
    main()
