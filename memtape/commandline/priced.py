"""The model a run is priced as, read from its header: ``show`` and ``why`` bill by it."""

from typing import TYPE_CHECKING

from memtape.runs.files import LoadedRun

if TYPE_CHECKING:
    from memtape.projections.billing.prices import Price
    from memtape.scenarios.cost import Cost


def run_price(loaded: LoadedRun, where: str) -> "tuple[Cost, Price] | None":
    """The run's ``[cost]`` table and its model's shipped price, or None when the run is not
    priced; a table or model memtape cannot price is refused naming ``where``."""
    if loaded.cost is None:
        return None
    # Only a priced run pays for these imports.
    from memtape.projections.billing.prices import shipped_prices  # noqa: PLC0415
    from memtape.scenarios.cost import read_cost  # noqa: PLC0415

    cost = read_cost(loaded.cost, f"{where}: line 1: cost")
    if cost.model is None:
        return None
    return cost, shipped_prices().price(cost.model, f"{where}: [cost] model")
