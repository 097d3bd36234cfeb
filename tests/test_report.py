"""memtape.lab.report: ``memtape bench`` end to end, its progress and its outputs."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io
import json
import re
from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import import_transcript
from memtape.lab.report import bench

CODING = Path(__file__).parent / "fixtures" / "coding-chat.jsonl"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_goes_to_a_terminal_on_stderr() -> None:
    out, err = io.StringIO(), _Terminal()
    bench(["refund-desk"], ["tiered", "none"], jobs=1, out=out, err=err)
    assert "2/2" in err.getvalue()
    assert "cells/s" in err.getvalue()
    assert "cells/s" not in out.getvalue()


def test_off_a_terminal_verbose_writes_lines() -> None:
    err = io.StringIO()
    bench(["refund-desk"], ["tiered", "none"], jobs=1, verbose=True, out=io.StringIO(), err=err)
    assert "bench: 2/2 cells (" in err.getvalue()


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


def test_json_with_losses_holds_each_loss_with_its_kind(tmp_path: Path) -> None:
    scenario = tmp_path / "coding.toml"
    text = import_transcript(CODING, probes="auto", budget=60, hot_n=2)
    scenario.write_text(text, "utf-8")
    report = tmp_path / "r.json"
    out = io.StringIO()
    bench([str(scenario)], ["sliding-window"], json_out=report, losses=True, jobs=1, out=out)
    (row,) = json.loads(report.read_text("utf-8"))["results"]
    kinds = {loss["kind"] for loss in row["losses"]}
    assert ["probe", "kind", "turn", "at", "event"] == list(row["losses"][0])
    assert {"path", "constraint"} <= kinds
    assert len(row["losses"]) == sum(
        " missing at turn " in line for line in out.getvalue().splitlines()
    )


def test_json_without_losses_keeps_the_contract(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    bench(["refund-desk"], ["tiered"], json_out=report, jobs=1, out=io.StringIO())
    (row,) = json.loads(report.read_text("utf-8"))["results"]
    assert ["scenario", "policy", "params", "metrics"] == list(row)


def test_json_into_a_missing_directory_is_refused_before_any_cell_runs(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(BadInput, match=r"^.*b\.json: cannot write it: no such directory"):
        bench(["refund-desk"], ["tiered"], json_out=tmp_path / "no" / "b.json", out=out)
    assert "" == out.getvalue()


def test_a_narrow_terminal_gets_a_table_that_fits_and_says_what_it_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = _Terminal()
    bench(["refund-desk"], ["tiered", "rolling-summary:keep=4"], jobs=1, quiet=True, out=out)
    lines = out.getvalue().splitlines()
    table = lines[: next(n for n, line in enumerate(lines) if line.startswith("columns left"))]

    assert [] == [line for line in table if len(_plain(line)) > 80]
    assert "…" not in out.getvalue()
    assert any(line.startswith("columns left out to fit 80 columns: ") for line in lines)


def test_columns_chooses_the_table_s_metrics() -> None:
    out = io.StringIO()
    bench(["refund-desk"], ["tiered"], jobs=1, columns=["compactions", "peak_tokens"], out=out)

    assert ["scenario", "policy", "params", "compactions", "peak"] == out.getvalue().split()[:5]


def _plain(line: str) -> str:
    """``line`` without its terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


def test_a_narrow_table_keeps_re_sent_and_probes_kept_and_its_notes_wrap() -> None:
    out = io.StringIO()
    policies = ["tiered", "clear-tool-results", "none"]
    bench(["refund-desk"], policies, jobs=1, quiet=True, width=60, out=out)
    lines = out.getvalue().splitlines()

    assert ["re-sent", "probes"] == lines[0].split()[-3:-1]
    assert [] == [line for line in lines if len(line) > 60]


def test_a_peak_left_out_takes_its_footnotes_with_it() -> None:
    out = io.StringIO()
    bench(["refund-desk"], ["tiered", "none"], jobs=1, columns=["tokens_resent"], out=out)

    assert "peak over budget" not in out.getvalue()
