"""`kope debug --explain`: what the offline search tried, in order, and why each candidate was kept or dropped."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from kope.repair.search import SearchResult


def explain(rounds: Sequence[SearchResult], limit: int = 60) -> list[Table | str]:
    """One table per search round (at most `limit` rows each), with a line saying how the round ended."""
    if not rounds:
        return ["no offline search ran (an LLM without --recipes-first, or --repair recipes)"]
    shown: list[Table | str] = []
    for number, result in enumerate(rounds, start=1):
        table = Table(
            title=f"search round {number}: {result.evaluations} evaluated of {result.candidates} "
            f"candidates, {result.seconds:.1f} s, {result.stop_reason}"
        )
        for column in ("#", "operator", "id", "line", "edit", "ranked by", "score", "verdict"):
            table.add_column(column, justify="right" if column in ("#", "line") else "left", overflow="fold")
        for trial in result.trials[:limit]:
            style = {"accepted": "bold green", "kept": "yellow"}.get(trial.verdict, "")
            table.add_row(
                str(trial.order),
                trial.operator,
                trial.label,
                str(trial.line),
                trial.description,
                f"{trial.why} (priority {trial.priority:g})",
                "(" + ", ".join(f"{v:.3g}" for v in trial.score) + ")",
                f"[{style}]{trial.verdict}[/]: {trial.reason}" if style else f"{trial.verdict}: {trial.reason}",
            )
        shown.append(table)
        if len(result.trials) > limit:
            shown.append(f"... {len(result.trials) - limit} more candidates (the transcript has them all)")
        start = ", ".join(f"{v:.3g}" for v in result.start_score)
        if result.accepted is not None:
            shown.append(f"round {number}: accepted a candidate (start score ({start}))")
        elif result.best is not None:
            shown.append(
                f"round {number}: kept the best partial edit, {result.best_description} "
                f"(score ({start}) -> {result.best_score})"
            )
        else:
            shown.append(f"round {number}: nothing better than the start (score ({start}))")
    return shown
