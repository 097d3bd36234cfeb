"""memtape.lab.report: ``memtape bench`` end to end, its progress and its outputs."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io
from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.report import bench


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_goes_to_a_terminal_on_stderr() -> None:
    out, err = io.StringIO(), _Terminal()
    bench(["refund-desk"], ["tiered", "none"], jobs=1, out=out, err=err)
    assert "bench: 2/2 cells (refund-desk, none)" in err.getvalue()
    assert "bench:" not in out.getvalue()


def test_quiet_or_not_a_terminal_shows_no_progress() -> None:
    for err, quiet in ((_Terminal(), True), (io.StringIO(), False)):
        bench(["refund-desk"], ["tiered"], jobs=1, quiet=quiet, out=io.StringIO(), err=err)
        assert "" == err.getvalue()


def test_a_directory_for_json_is_refused_before_any_cell_runs(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="is a directory"):
        bench(["refund-desk"], ["tiered"], json_out=tmp_path, out=io.StringIO())


def test_json_and_plot_are_written_and_named(tmp_path: Path) -> None:
    out = io.StringIO()
    bench(
        ["refund-desk"],
        ["tiered"],
        json_out=tmp_path / "b.json",
        plot_out=tmp_path / "b.png",
        jobs=1,
        out=out,
    )
    assert f"wrote {tmp_path / 'b.json'}" in out.getvalue()
    assert {"b.json", "b.png", "b.svg"} == {path.name for path in tmp_path.iterdir()}


def test_json_into_a_missing_directory_is_refused_before_any_cell_runs(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(BadInput, match=r"^.*b\.json: cannot write it: no such directory"):
        bench(["refund-desk"], ["tiered"], json_out=tmp_path / "no" / "b.json", out=out)
    assert "" == out.getvalue()
