"""``memtape show``: the projections at one point of a run."""

import argparse
from typing import Any

from memtape.commandline.numbers import within
from memtape.commandline.opening import open_run
from memtape.commandline.output import emit, terminal_width
from memtape.commandline.priced import run_price
from memtape.projections.text import render_view
from memtape.projections.view import view_data
from memtape.runs.files import LoadedRun


def run(args: argparse.Namespace) -> int:
    """Show the window, the store and the memory after event ``--at`` (default: the end); a
    priced run's bill up to there too."""
    loaded = open_run(args.run, trust=args.trust)
    run = loaded.session.run
    at = len(run) if args.at is None else within(args.at, len(run), f"{args.run}: --at")
    view = view_data(run.state_at(at), at, loaded.session.policies_at(at))
    billed = _billed(loaded, at, args.run, args.prices)
    if billed is not None:
        view["cost"] = billed
    width = terminal_width()

    def lines(data: Any, color: bool) -> Any:
        yield from render_view(data, color, width)
        if billed is not None:
            yield (
                f"billed as {billed['model']}: ${billed['usd']:.6f} "
                f"({billed['billed_input_tokens']:,} input, {billed['cache_read_tokens']:,} "
                f"cache read, {billed['cache_write_tokens']:,} cache write, "
                f"{billed['cache_breaks']} cache breaks)"
            )

    emit(args, view, lines)
    return 0


def _billed(loaded: LoadedRun, at: int, where: str, prices: str | None) -> dict[str, Any] | None:
    """The run's bill up to event ``at`` (its cost metrics and the model), when priced (at
    the ``--prices`` file's prices, when given)."""
    priced = run_price(loaded, where, prices)
    if priced is None:
        return None
    # Only a priced run pays for this import.
    from memtape.projections.billing.tally import bill_run  # noqa: PLC0415

    cost, price = priced
    run = loaded.session.run
    tally = bill_run(run, price, cost.ttl, cost.prefix, until=at, warm=cost.warm)
    return {"model": price.model, **tally.metrics().data()}
