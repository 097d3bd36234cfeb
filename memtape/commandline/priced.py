"""The model a run is priced as, read from its header: ``show`` and ``why`` bill by it."""

from pathlib import Path
from typing import TYPE_CHECKING

from memtape.runs.files import LoadedRun

if TYPE_CHECKING:
    from memtape.projections.billing.prices import Price, PriceTable
    from memtape.scenarios.cost import Cost


def price_table(prices: str | None) -> "PriceTable":
    """The shipped price table, updated by the ``--prices`` file when one is given (a bad
    file is refused, naming it)."""
    # Only a priced run, or a price file, pays for this import.
    from memtape.projections.billing.prices import read_prices, shipped_prices  # noqa: PLC0415

    return shipped_prices() if prices is None else read_prices(Path(prices))


def run_price(
    loaded: LoadedRun, where: str, prices: str | None = None
) -> "tuple[Cost, Price] | None":
    """The run's ``[cost]`` table and its model's price (the shipped one, or the ``--prices``
    file's), or None when the run is not priced; a table or model memtape cannot price is
    refused naming ``where``, a bad price file naming the file, priced or not."""
    table = None if prices is None else price_table(prices)
    if loaded.cost is None:
        return None
    from memtape.scenarios.cost import read_cost  # noqa: PLC0415

    cost = read_cost(loaded.cost, f"{where}: line 1: cost")
    if cost.model is None:
        return None
    table = price_table(None) if table is None else table
    return cost, table.price(cost.model, f"{where}: [cost] model")
