"""memtape.runs.files: a session saved to a run file and loaded back."""

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.core.commands import AddTurn, AdvanceClock, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import FactWritten, TurnAdded
from memtape.policies.session import Session
from memtape.runs.files import LoadedRun, load_run, save_run
from memtape.scenarios import SHIPPED, load_scenario


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    return {name: _session(name) for name in SHIPPED}


def _saved(tmp_path: Path, session: Session, scenario: str = "saved") -> Path:
    path = tmp_path / "run.jsonl"
    save_run(session, path, scenario)
    return path


def _loaded(tmp_path: Path, sessions: dict[str, Session], name: str) -> LoadedRun:
    return load_run(_saved(tmp_path, sessions[name], name))


def _rewrite_header(path: Path, change: dict[str, Any], drop: str | None = None) -> None:
    lines = path.read_text("utf-8").splitlines()
    header = json.loads(lines[0]) | change
    if drop is not None:
        del header[drop]
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", "utf-8")


class TestSaveRun:
    def test_header_names_the_scenario(self, tmp_path: Path, sessions: dict[str, Session]) -> None:
        path = _saved(tmp_path, sessions["dana-facts"], "my-scenario")

        assert "my-scenario" == json.loads(path.read_text("utf-8").splitlines()[0])["scenario"]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_header_holds_the_policies_parameters(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        path = _saved(tmp_path, sessions[name])
        header = json.loads(path.read_text("utf-8").splitlines()[0])

        assert sessions[name].policies.params() == header["policies"]


class TestLoadRun:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_events_are_the_saved_events(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        loaded = _loaded(tmp_path, sessions, name)

        assert sessions[name].run.events == loaded.session.run.events

    @pytest.mark.parametrize("name", SHIPPED)
    def test_commands_are_the_saved_commands(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        loaded = _loaded(tmp_path, sessions, name)

        assert sessions[name].run.commands == loaded.session.run.commands

    @pytest.mark.parametrize("name", SHIPPED)
    def test_the_final_state_is_the_saved_state(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        loaded = _loaded(tmp_path, sessions, name)

        assert sessions[name].state == loaded.session.state

    @pytest.mark.parametrize("name", SHIPPED)
    def test_every_point_is_the_saved_point(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        saved = sessions[name].run
        loaded = _loaded(tmp_path, sessions, name).session.run

        assert [saved.state_at(i) for i in range(len(saved) + 1)] == [
            loaded.state_at(i) for i in range(len(loaded) + 1)
        ]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_batches_are_the_saved_batches(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        saved = sessions[name].run
        loaded = _loaded(tmp_path, sessions, name).session.run
        steps = range(1, len(saved.commands) + 1)

        assert [saved.batch(s) for s in steps] == [loaded.batch(s) for s in steps]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_policies_are_rebuilt_equal(
        self, tmp_path: Path, sessions: dict[str, Session], name: str
    ) -> None:
        loaded = _loaded(tmp_path, sessions, name)

        assert sessions[name].policies == loaded.session.policies

    def test_the_scenario_name_comes_from_the_header(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        assert "dana-facts" == _loaded(tmp_path, sessions, "dana-facts").scenario

    def test_the_path_is_kept(self, tmp_path: Path, sessions: dict[str, Session]) -> None:
        path = _saved(tmp_path, sessions["sleep-pass"])

        assert path == load_run(path).path

    def test_without_a_scenario_name_the_file_stem_stands_in(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        path = _saved(tmp_path, sessions["sleep-pass"])
        _rewrite_header(path, {}, drop="scenario")

        assert "run" == load_run(path).scenario


class TestLoadedSessionCarriesOn:
    def test_a_new_turn_is_decided_against_the_loaded_window(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        session = _loaded(tmp_path, sessions, "refund-desk").session
        events = session.execute(AddTurn("user", "thanks, that is all"))

        assert (TurnAdded(11, "user", "thanks, that is all", 5, False),) == events

    def test_the_loaded_budget_still_compacts(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        # 32 tokens loaded + 9 for this turn = 41, over the loaded budget of 40.
        session = _loaded(tmp_path, sessions, "refund-desk").session
        events = session.execute(AddTurn("user", "one two three four five six seven eight"))

        assert ["TurnAdded", "CompactionTriggered"] == [type(e).__name__ for e in events]

    def test_a_new_write_is_decided_against_the_loaded_store(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        session = _loaded(tmp_path, sessions, "dana-facts").session
        session.execute(AdvanceClock(8.0))
        events = session.execute(WriteFact("city", "Dana lives in Lyon.", 0.5))

        assert FactWritten(7, "city", "Dana lives in Lyon.", 0.5) == events[0]


class TestLoadRunErrors:
    def test_a_header_without_policies(self, tmp_path: Path, sessions: dict[str, Session]) -> None:
        path = _saved(tmp_path, sessions["refund-desk"])
        _rewrite_header(path, {}, drop="policies")

        with pytest.raises(BadInput, match="line 1: the header names no policies"):
            load_run(path)

    def test_policies_that_are_not_a_table(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        path = _saved(tmp_path, sessions["refund-desk"])
        _rewrite_header(path, {"policies": ["tiered"]})

        with pytest.raises(BadInput, match="line 1: the header names no policies"):
            load_run(path)

    def test_an_unknown_policy_names_the_header(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        path = _saved(tmp_path, sessions["refund-desk"])
        _rewrite_header(path, {"policies": {"compaction": {"policy": "lru", "budget": 40}}})

        with pytest.raises(BadInput, match=r"line 1: policies: \[compaction\] policy"):
            load_run(path)

    def test_an_impossible_parameter_names_the_header(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        policies = {"forgetting": {"policy": "importance-recency-access", "capacity": 0}}
        path = _saved(tmp_path, sessions["dana-facts"])
        _rewrite_header(path, {"policies": policies})

        with pytest.raises(BadInput, match=r"line 1: policies: \[forgetting\]: capacity"):
            load_run(path)

    def test_an_event_that_does_not_fit_names_the_step_and_line(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        # Line 7 is the first read of 'name' (fact 1): make it read fact 99.
        path = _saved(tmp_path, sessions["dana-facts"])
        lines = path.read_text("utf-8").splitlines()
        read = json.loads(lines[6])
        read["event"]["id"] = 99
        lines[6] = json.dumps(read)
        path.write_text("\n".join(lines) + "\n", "utf-8")

        with pytest.raises(BadInput, match=r"step 6 \(line 7\)"):
            load_run(path)

    def test_a_malformed_file_is_reported_by_the_reader(self, tmp_path: Path) -> None:
        path = tmp_path / "run.jsonl"
        path.write_text("not json\n", "utf-8")

        with pytest.raises(BadInput, match="line 1: not JSON"):
            load_run(path)


class TestForkedRunFiles:
    def _forked(self, tmp_path: Path) -> Path:
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        path = tmp_path / "forked.jsonl"
        origin = {"run": "refund-desk", "at": 5, "set": ["compaction.budget=60"]}
        save_run(session.fork(5, ["compaction.budget=60"]), path, "refund-desk", origin=origin)
        return path

    def test_the_epochs_come_back(self, tmp_path: Path) -> None:
        session = load_run(self._forked(tmp_path)).session

        assert [(0, 40), (5, 60)] == [
            (epoch.start, epoch.policies.compaction.budget)  # type: ignore[union-attr]
            for epoch in session.epochs
        ]

    def test_the_header_says_where_the_fork_came_from(self, tmp_path: Path) -> None:
        header = json.loads(self._forked(tmp_path).read_text("utf-8").splitlines()[0])

        assert {"run": "refund-desk", "at": 5, "set": ["compaction.budget=60"]} == header[
            "forked_from"
        ]

    def test_a_run_never_forked_writes_no_epochs(self, tmp_path: Path) -> None:
        scenario = load_scenario("dana-facts")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        path = tmp_path / "plain.jsonl"
        save_run(session, path, "dana-facts")

        assert "epochs" not in json.loads(path.read_text("utf-8").splitlines()[0])

    @pytest.mark.parametrize(
        ("epochs", "fragment"),
        [
            ("not a list", "a list of"),
            ([{"from": 3, "policies": {}}], "epoch 1 starts at 3"),
            ([{"from": 0, "policies": {}}, {"from": 0, "policies": {}}], "epoch 2 starts at 0"),
            ([{"from": 0}], "epoch 1 names no policies"),
            (
                [
                    {"from": 0, "policies": {"compaction": {"policy": "tiered", "budget": 40}}},
                    {"from": 4, "policies": {"compaction": {"policy": "tiered", "budget": 60}}},
                ],
                "epoch 2 starts at 4, inside a command",
            ),
        ],
    )
    def test_bad_epochs_are_named(self, tmp_path: Path, epochs: object, fragment: str) -> None:
        path = self._forked(tmp_path)
        lines = path.read_text("utf-8").splitlines()
        header = json.loads(lines[0])
        header["epochs"] = epochs
        path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", "utf-8")

        with pytest.raises(BadInput, match=fragment):
            load_run(path)
