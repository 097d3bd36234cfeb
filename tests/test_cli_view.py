"""``memtape view`` and ``memtape serve`` on the command line: what they take and refuse."""

import json
import re
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.policies.session import Session
from memtape.runs.files import save_run
from memtape.scenarios import load_scenario


def page_data(path: Path) -> dict[str, object]:
    page = path.read_text(encoding="utf-8")
    match = re.search(r'id="memtape-data">(.*?)</script>', page, re.S)
    assert match is not None
    data = json.loads(match.group(1))
    assert isinstance(data, dict)
    return data


def names(path: Path) -> list[str]:
    runs = page_data(path)["runs"]
    assert isinstance(runs, list)
    return [run["name"] for run in runs]


class TestView:
    def test_a_scenario_is_simulated_into_one_page(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "rd.html"
        assert 0 == main(["view", "refund-desk", "--out", str(out)])
        assert f"wrote {out}: open it in a browser\n" == capsys.readouterr().out
        assert ["refund-desk"] == names(out)

    def test_the_page_is_named_after_the_run_by_default(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["view", "dana-facts"])
        assert ["dana-facts"] == names(tmp_path / "dana-facts.html")

    def test_a_run_file_names_its_page_whatever_its_header_says(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The header's scenario name may be anything, "../../away/x" too: it is not used."""
        session = Session(load_scenario("refund-desk").policies)
        session.execute(AddTurn("user", "hello"))
        save_run(session, tmp_path / "r.jsonl", "../../away/x")
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["view", "r.jsonl"])
        assert ["r.html", "r.jsonl"] == sorted(path.name for path in tmp_path.iterdir())

    def test_two_runs_of_the_same_scenario_get_a_page_each(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        for name in ("a", "b"):
            assert 0 == main(["run", "refund-desk", "--out", f"{name}.jsonl"])
            assert 0 == main(["view", f"{name}.jsonl"])
        assert {"a.jsonl", "a.html", "b.jsonl", "b.html"} == {p.name for p in tmp_path.iterdir()}

    @pytest.mark.parametrize(
        ("argv", "page"),
        [
            (["view", "runs.db#1"], "runs-1.html"),
            (["view", "runs.db"], "runs-2.html"),
            (["view", "a.jsonl", "--compare", "runs.db#2"], "a-vs-runs-2.html"),
            (["view", "sub/s.toml"], "s.html"),
        ],
    )
    def test_a_store_run_a_comparison_and_a_scenario_file_name_their_page(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], page: str
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["run", "refund-desk", "--out", "a.jsonl"])
        for _ in range(2):
            assert 0 == main(["run", "refund-desk", "--out", "runs.db"])
        Path("sub").mkdir()
        Path("sub/s.toml").write_text(load_scenario_text(), encoding="utf-8")
        before = {path.name for path in tmp_path.iterdir()}
        assert 0 == main(argv)
        assert {page} == {path.name for path in tmp_path.iterdir()} - before

    def test_run_files_and_stores_and_a_comparison(self, tmp_path: Path) -> None:
        jsonl, store, out = tmp_path / "a.jsonl", tmp_path / "runs.db", tmp_path / "v.html"
        assert 0 == main(["run", "refund-desk", "--out", str(jsonl)])
        assert 0 == main(
            ["run", "refund-desk", "--set", "compaction.budget=60", "--out", str(store)]
        )
        assert 0 == main(["view", str(jsonl), "--compare", f"{store}#1", "--out", str(out)])
        assert [
            "refund-desk · compaction tiered, compaction.budget=40",
            "refund-desk · compaction tiered, compaction.budget=60",
        ] == names(out)
        assert (
            "<title>memtape · refund-desk · compaction tiered, compaction.budget=40 vs "
            "refund-desk · compaction tiered, compaction.budget=60</title>"
        ) in out.read_text()
        runs = page_data(out)["runs"]
        assert isinstance(runs, list)
        assert [40, 60] == [run["params"]["budget"] for run in runs]

    def test_settings_change_the_scenario_not_the_comparison(self, tmp_path: Path) -> None:
        out = tmp_path / "sw.html"
        argv = ["view", "refund-desk", "--set", "compaction.policy=sliding-window"]
        assert 0 == main([*argv, "--compare", "refund-desk", "--out", str(out)])
        runs = page_data(out)["runs"]
        assert isinstance(runs, list)
        assert ["sliding-window", "tiered"] == [run["params"]["compaction"] for run in runs]
        assert [
            "refund-desk · compaction sliding-window",
            "refund-desk · compaction tiered",
        ] == names(out)
        assert [40, 40] == [run["params"]["budget"] for run in runs]

    def test_two_runs_of_the_same_policies_are_told_apart_by_their_files(
        self, tmp_path: Path
    ) -> None:
        first, second, out = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "v.html"
        for path in (first, second):
            assert 0 == main(["run", "refund-desk", "--out", str(path)])
        assert 0 == main(["view", str(first), "--compare", str(second), "--out", str(out)])

        assert [
            "refund-desk · compaction tiered (a.jsonl)",
            "refund-desk · compaction tiered (b.jsonl)",
        ] == names(out)

    def test_a_query_scenario_is_viewed(self, tmp_path: Path) -> None:
        out = tmp_path / "q.html"
        fixture = Path(__file__).parent / "fixtures" / "dana-queries.toml"
        assert 0 == main(["view", str(fixture), "--out", str(out)])
        runs = page_data(out)["runs"]
        assert isinstance(runs, list)
        kinds = [row[1] for row in runs[0]["rows"]]
        assert 2 == kinds.count("Queried")

    @pytest.mark.parametrize(
        "case",
        [
            ("a.jsonl", None, "a.jsonl"),
            ("refund-desk", "./a.jsonl", "a.jsonl"),
            ("runs.db#1", None, "runs.db"),
            ("a.toml", None, "a.toml"),
        ],
    )
    def test_an_out_that_is_an_input_is_refused_and_left_as_it_was(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        case: tuple[str, str | None, str],
    ) -> None:
        """The page would replace the run, store or scenario it shows."""
        target, compare, out = case
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["run", "refund-desk", "--out", "a.jsonl"])
        assert 0 == main(["run", "refund-desk", "--out", "runs.db"])
        scenario = '[compaction]\npolicy = "tiered"\nbudget = 40\n\n[[step]]\nturn = "user"\n'
        Path("a.toml").write_text(f'{scenario}text = "hi"\n', encoding="utf-8")
        before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
        capsys.readouterr()

        argv = ["view", target, "--out", out, *(["--compare", compare] if compare else [])]

        assert 2 == main(argv)
        shown = compare or target
        assert (
            f"memtape: error: {out}: cannot write it: it is {shown}, which this command reads\n"
            == (capsys.readouterr().err)
        )
        assert before == {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    @pytest.mark.parametrize(
        ("argv", "fragment"),
        [
            (["view", "refund-desk", "--set", "compaction.bogus=1"], "unknown parameter bogus"),
            (["view", "refund-desk", "--set", "budget"], "write AXIS.PARAM=VALUE"),
            (["serve", "refund-desk", "--set", "forgetting.capacity=2"], "no [forgetting] policy"),
            (["view", "a.jsonl", "--set", "compaction.budget=6"], "fork a recorded run instead"),
            (["view", "no-such-scenario"], "no-such-scenario"),
            (["view", "refund-desk", "--compare", "missing.jsonl"], "missing.jsonl"),
            (
                ["view", "refund-desk", "--out", "no/such/folder/p.html"],
                "cannot write it: no such directory",
            ),
            (["serve", "no-such-scenario"], "no-such-scenario"),
            (["serve", "refund-desk", "--port", "70000"], "--port 70000 is not a port"),
        ],
    )
    def test_bad_input_is_one_line_and_writes_nothing(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        argv: list[str],
        fragment: str,
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert 2 == main(argv)
        err = capsys.readouterr().err
        assert err.startswith("memtape: error: ")
        assert fragment in err
        assert 1 == err.count("\n")
        assert [] == list(tmp_path.iterdir())


def load_scenario_text() -> str:
    """A small scenario file's text."""
    return '[compaction]\npolicy = "tiered"\nbudget = 40\n\n[[step]]\nturn = "user"\ntext = "hi"\n'


class TestViewForce:
    def test_another_runs_page_is_refused_in_one_line_and_left_as_it_was(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.chdir(tmp_path)
        for name in ("a", "b"):
            assert 0 == main(["run", "refund-desk", "--out", f"{name}.jsonl"])
        assert 0 == main(["view", "a.jsonl", "--out", "page.html"])
        before = Path("page.html").read_bytes()
        capsys.readouterr()
        assert 2 == main(["view", "b.jsonl", "--out", "page.html"])
        assert (
            "memtape: error: page.html: cannot write it: it is the page of another run; "
            "--force replaces it\n"
        ) == capsys.readouterr().err
        assert before == Path("page.html").read_bytes()

    def test_force_replaces_another_runs_page(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["view", "refund-desk", "--out", "page.html"])
        assert 0 == main(["view", "dana-facts", "--out", "page.html", "--force"])
        assert ["dana-facts"] == names(Path("page.html"))

    def test_the_same_run_viewed_again_replaces_its_own_page(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["run", "refund-desk", "--out", "a.jsonl"])
        assert 0 == main(["view", "a.jsonl"])
        Path("a.html").write_text(
            Path("a.html").read_text(encoding="utf-8") + "<!-- edited -->", encoding="utf-8"
        )
        assert 0 == main(["view", "./a.jsonl"])
        assert not Path("a.html").read_text(encoding="utf-8").endswith("<!-- edited -->")

    @pytest.mark.parametrize(
        "argv",
        [
            ["view", "refund-desk", "--set", "compaction.budget=60"],
            ["view", "refund-desk", "--compare", "refund-desk", "--out", "refund-desk.html"],
        ],
    )
    def test_other_settings_or_a_comparison_are_another_run(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
    ) -> None:
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["view", "refund-desk"])
        assert 2 == main(argv)

    def test_an_empty_file_is_replaced(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        Path("refund-desk.html").touch()
        assert 0 == main(["view", "refund-desk"])
        assert ["refund-desk"] == names(Path("refund-desk.html"))

    def test_a_file_that_is_not_a_page_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        monkeypatch.chdir(tmp_path)
        Path("refund-desk.html").write_text("my notes", encoding="utf-8")
        assert 2 == main(["view", "refund-desk"])
        assert "it is not a memtape page; --force replaces it" in capsys.readouterr().err
        assert "my notes" == Path("refund-desk.html").read_text(encoding="utf-8")


PROBED = (
    '[compaction]\npolicy = "tiered"\nbudget = 40\n\n'
    '[[probe]]\ntext = "GX-20418"\nfrom = 2\n\n'
    '[[step]]\nturn = "user"\ntext = "My order is GX-20418, paid $180.00."\n\n'
    '[[step]]\nturn = "assistant"\ntext = "Thanks."\n'
)


class TestViewProbes:
    @pytest.fixture
    def recorded(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """A run of a scenario file that plants one probe (its header names the scenario,
        not the file)."""
        monkeypatch.chdir(tmp_path)
        Path("probed.toml").write_text(PROBED, encoding="utf-8")
        assert 0 == main(["run", "probed.toml", "--out", "a.jsonl"])
        return tmp_path

    def test_a_scenario_brings_its_probes(self, recorded: Path) -> None:
        assert 0 == main(["view", "probed.toml"])
        runs = page_data(recorded / "probed.html")["runs"]
        assert isinstance(runs, list)
        assert [["GX-20418", 2]] == runs[0]["probes"]

    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ([], []),
            (["--probes", "probed.toml"], [["GX-20418", 2]]),
            (["--probes", "auto"], [["GX-20418", 2], ["$180.00", 2]]),
            (["--probes", "p.jsonl"], [["paid", 1]]),
        ],
    )
    def test_a_run_file_follows_the_probes_given(
        self, recorded: Path, given: list[str], expected: list[object]
    ) -> None:
        Path("p.jsonl").write_text('{"text": "paid", "from": 1}\n', encoding="utf-8")
        assert 0 == main(["view", "a.jsonl", *given])
        runs = page_data(recorded / "a.html")["runs"]
        assert isinstance(runs, list)
        assert expected == runs[0]["probes"]

    def test_a_probe_no_turn_holds_is_one_line_and_no_page(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        Path("p.jsonl").write_text('{"text": "nowhere", "from": 1}\n', encoding="utf-8")
        capsys.readouterr()
        assert 2 == main(["view", "a.jsonl", "--probes", "p.jsonl"])
        err = capsys.readouterr().err
        assert "p.jsonl:1: text 'nowhere' occurs in no turn of the transcript\n" in err
        assert 1 == err.count("\n")
        assert not (recorded / "a.html").exists()
