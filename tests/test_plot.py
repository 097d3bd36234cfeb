"""memtape.lab.plot: the meter and probe retention, as PNG and SVG."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.bench import METRICS, Result
from memtape.lab.plot import plot_paths, write_plot


def _result(scenario: str, sent: tuple[int, ...]) -> Result:
    retention = tuple(None if n < 2 else 1.0 for n in range(len(sent)))
    return Result(scenario, "tiered", "tiered", {}, dict.fromkeys(METRICS), 40, sent, retention)


def test_a_png_gets_an_svg_beside_it(tmp_path: Path) -> None:
    png = tmp_path / "m.png"
    assert (png, tmp_path / "m.svg") == plot_paths(png)


@pytest.mark.parametrize("name", ["m.svg", "m"])
def test_other_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(BadInput, match="--plot"):
        plot_paths(tmp_path / name)


def test_a_png_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"m\.png: cannot write it: no such directory"):
        plot_paths(tmp_path / "nowhere" / "m.png")


def test_every_scenario_with_turns_is_drawn(tmp_path: Path) -> None:
    png, svg = write_plot(
        [_result("first", (10, 20, 30)), _result("second", (5, 6)), _result("none", ())],
        tmp_path / "m.png",
    )
    drawing = svg.read_text("utf-8")
    assert png.read_bytes().startswith(b"\x89PNG")
    assert ["first", "second"] == [
        n for n in ("first", "second", "none") if f"{n}: tokens" in drawing
    ]


def test_the_same_results_draw_the_same_bytes(tmp_path: Path) -> None:
    results = [_result("first", (10, 20, 30))]
    first = write_plot(results, tmp_path / "a.png")
    second = write_plot(results, tmp_path / "b.png")
    assert [path.read_bytes() for path in first] == [path.read_bytes() for path in second]
