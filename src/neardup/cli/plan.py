"""``neardup plan`` (LSH banding for a threshold) and ``neardup warmup`` (a no-op, one release)."""

from __future__ import annotations

import click

from neardup.cli.options import errors

__all__ = ["plan_cmd", "warmup_cmd"]


@click.command("plan")
@click.option("--threshold", "-t", type=float, required=True, help="Jaccard threshold.")
@click.option("--num-perm", "-n", type=int, default=128, show_default=True)
@click.option("--fp-weight", type=float, default=0.5, show_default=True)
@click.option("--fn-weight", type=float, default=0.5, show_default=True)
@click.option(
    "--mode",
    type=click.Choice(["recall", "weighted", "txtfp"]),
    default="recall",
    show_default=True,
    help="recall: P(t) >= 0.99 (LSHIndex's default).",
)
@errors
def plan_cmd(
    threshold: float, num_perm: int, fp_weight: float, fn_weight: float, mode: str
) -> None:
    """Bands, rows and predicted false positive/negative rates, with the S-curve."""
    from neardup.index.lsh import plan_lsh

    p = plan_lsh(threshold, num_perm, fp_weight=fp_weight, fn_weight=fn_weight, method=mode)  # type: ignore[arg-type]
    click.echo(f"bands={p.bands} rows={p.rows} (uses {p.bands * p.rows} of {num_perm} slots)")
    click.echo(
        f"false positive rate={p.fp:.4f} false negative rate={p.fn:.4f} "
        f"P(candidate | J={threshold})={p.recall_at_threshold:.4f}"
    )
    click.echo("S-curve: Jaccard -> P(candidate)")
    for s, prob in p.curve(11):
        bar = "#" * round(prob * 50)
        click.echo(f"  {s:4.2f} {prob:6.4f} {bar}")


@click.command("warmup")
@click.option("--background", is_flag=True, hidden=True, help="Accepted and ignored.")
def warmup_cmd(background: bool) -> None:
    """No longer needed: the kernels are compiled when the package is built (kept for one
    release so that scripts calling it keep working)."""
    click.echo(
        "neardup warmup: nothing to do: the kernels are compiled when neardup is built; "
        "remove this call",
        err=True,
    )
