"""The bench's plot: the meter over turns and the probe retention, one line per policy.

matplotlib is an optional extra (``memtape[plot]``); it is imported only
when a plot is asked for.
"""

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memtape.core.errors import BadInput
from memtape.core.visible import visible
from memtape.lab.bench import Result
from memtape.lab.files import check_writable, write_atomic
from memtape.lab.frontier import FEWER_IS_BETTER, Frontier


def plot_paths(out: Path) -> tuple[Path, Path]:
    """The PNG and the SVG a ``--plot OUT.png`` writes."""
    if out.suffix.lower() != ".png":
        raise BadInput(f"--plot {out}: name a .png file (an .svg is written beside it)")
    svg = out.with_suffix(".svg")
    for path in (out, svg):
        check_writable(path)
    return out, svg


def check_plotting() -> None:
    """Fail early, as bad input, when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401, PLC0415
    except ImportError:
        from memtape.core.extras import install_hint  # noqa: PLC0415 (a refusal only)

        raise BadInput(f"--plot needs matplotlib: {install_hint('plot')}") from None


def write_plot(
    results: Sequence[Result], out: Path, frontiers: Sequence[Frontier] = ()
) -> tuple[Path, Path]:
    """Draw every scenario with turns (a row each: meter, probe retention, and its cost
    frontier when ``frontiers`` has one); write PNG and SVG."""
    png, svg = plot_paths(out)
    check_plotting()
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib import pyplot  # noqa: PLC0415

    scenarios = list(dict.fromkeys(result.scenario for result in results if result.sent))
    if not scenarios:
        raise BadInput(f"--plot {out}: no scenario has turns, so there is no meter to draw")
    fronts = {frontier.scenario: frontier for frontier in frontiers}
    panels = 3 if fronts else 2
    figure, axes = pyplot.subplots(
        len(scenarios), panels, figsize=(6.5 * panels, 3.8 * len(scenarios)), squeeze=False
    )
    for row, scenario in zip(axes, scenarios, strict=True):
        meter, retention = row[:2]
        if scenario in fronts:
            _draw_frontier(row[2], fronts[scenario])
        elif panels == 3:
            row[2].set_axis_off()
        drawn = [result for result in results if result.scenario == scenario and result.sent]
        for result in drawn:
            turns = range(1, len(result.sent) + 1)
            (line,) = meter.plot(turns, result.sent, linewidth=0.9, label=visible(result.label))
            shares = [math.nan if share is None else share for share in result.retention]
            retention.plot(
                turns, shares, linewidth=0.9, color=line.get_color(), label=visible(result.label)
            )
        budgets = sorted({result.budget for result in drawn if result.budget is not None})
        for budget in budgets:
            meter.axhline(budget, color="grey", linestyle="--", linewidth=0.7)
        if budgets and max(max(result.sent) for result in drawn) > 10 * budgets[-1]:
            # A policy that never compacts would flatten every other line.
            meter.set_yscale("log")
        meter.set_title(f"{visible(scenario)}: tokens sent per turn (dashed: budget)")
        meter.set_xlabel("turn")
        meter.set_ylabel("tokens")
        meter.legend(fontsize="small")
        retention.set_title(f"{visible(scenario)}: share of due probes visible")
        retention.set_xlabel("turn")
        retention.set_ylim(-0.05, 1.05)
        retention.legend(fontsize="small")
    figure.tight_layout()
    drawn_png, drawn_svg = io.BytesIO(), io.BytesIO()
    figure.savefig(drawn_png, format="png", dpi=110)
    # A fixed salt: matplotlib otherwise salts the SVG's ids with a fresh uuid4.
    with matplotlib.rc_context({"svg.hashsalt": "memtape"}):
        figure.savefig(drawn_svg, format="svg", metadata={"Date": None})
    pyplot.close(figure)
    write_atomic(png, drawn_png.getvalue())
    write_atomic(svg, drawn_svg.getvalue())
    return png, svg


def _draw_frontier(axis: Any, frontier: Frontier) -> None:
    """A scenario's policies as points, cost against gain, the frontier joined by a line."""
    for point in frontier.points:
        marker = "o" if point.beaten_by is None else "x"
        axis.scatter([point.cost], [point.gain], marker=marker)
        axis.annotate(visible(point.label), (point.cost, point.gain), fontsize="small")
    front = frontier.front
    axis.plot([p.cost for p in front], [p.gain for p in front], color="grey", linewidth=0.8)
    axis.set_title(f"{visible(frontier.scenario)}: frontier (x: below it)")
    axis.set_xlabel(frontier.cost)
    fewer = " (fewer is better)" if frontier.gain in FEWER_IS_BETTER else ""
    axis.set_ylabel(f"{frontier.gain}{fewer}")
