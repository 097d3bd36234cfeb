"""``memtape why``: the life of a turn or a fact, with the numbers behind each step."""

import argparse
from typing import Any

from memtape.commandline.opening import open_run
from memtape.commandline.output import emit
from memtape.commandline.priced import price_table, run_price
from memtape.core.errors import MemtapeError
from memtape.projections.audit import TurnTarget, audit, life_data, parse_target, render_life
from memtape.runs.files import LoadedRun


def run(args: argparse.Namespace) -> int:
    """Print the life of ``args.target`` in the run; for a turn of a priced run, what its
    request was billed and which compaction broke its cached prefix."""
    loaded = open_run(args.run, trust=args.trust)
    try:
        target = parse_target(args.target)
        life = audit(loaded.session.run, loaded.session.policies_at, target)
    except MemtapeError as error:
        raise MemtapeError(f"{args.run}: {error}") from None
    data = life_data(life)
    turn = target.turn if isinstance(target, TurnTarget) else None
    if turn is None and args.prices is not None:
        price_table(args.prices)  # a fact's life bills nothing, but a bad file is refused
    billed = None if turn is None else _billed(loaded, turn, args.run, args.prices)
    if billed is not None:
        data["cost"] = billed[1]

    def lines(_: Any, __: bool) -> Any:
        yield from render_life(life)
        if billed is not None:
            from memtape.projections.billing.blame import blame_line  # noqa: PLC0415

            yield blame_line(*billed)

    emit(args, data, lines)
    return 0


def _billed(
    loaded: LoadedRun, turn: int, where: str, prices: str | None
) -> tuple[str, dict[str, Any]] | None:
    """The model and the ``cost`` data of turn ``turn``'s request, when the run is priced (at
    the ``--prices`` file's prices, when given)."""
    priced = run_price(loaded, where, prices)
    if priced is None:
        return None
    # Only a priced run pays for these imports.
    from memtape.projections.billing.blame import blame_data, turn_request  # noqa: PLC0415

    cost, price = priced
    run = loaded.session.run
    request = turn_request(run, turn, price, cost.ttl, cost.prefix, warm=cost.warm)
    session = loaded.session

    def policy_at(position: int) -> str:
        compaction = session.policies_at(position - 1).compaction
        return "?" if compaction is None else compaction.name

    return price.model, blame_data(request, policy_at)
