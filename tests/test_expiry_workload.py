"""memtape.lab.expiry_workload and ``memtape generate expiry``: facts that go stale."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import Query, WriteFact
from memtape.core.events import Expired
from memtape.lab.expiry_workload import SESSION_TTL, expiry_workload
from memtape.policies.session import Session
from memtape.scenarios import parse_scenario


def _run(text: str, *settings: str) -> Session:
    scenario = parse_scenario(text, "gen.toml")
    session = Session(scenario.policies.with_settings(settings))
    session.execute_all(scenario.steps)
    return session


class TestExpiryWorkload:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert expiry_workload(300, 5) == expiry_workload(300, 5)

    def test_another_seed_gives_another_workload(self) -> None:
        assert expiry_workload(300, 5) != expiry_workload(300, 6)

    def test_the_header_sets_a_ttl_for_session_notes(self) -> None:
        scenario = parse_scenario(expiry_workload(20, 1), "g.toml")
        forgetting = scenario.policies.params()["forgetting"]
        assert {"session.*": float(SESSION_TTL)} == forgetting["ttl"]

    def test_promotions_name_their_end_and_nothing_else_does(self) -> None:
        steps = parse_scenario(expiry_workload(400, 2), "g.toml").steps
        writes = [step for step in steps if isinstance(step, WriteFact)]
        ending = {w.key.split(".")[0] for w in writes if w.expires_at is not None}
        assert {"promo"} == ending

    def test_every_query_expects_a_key_written_before_it(self) -> None:
        written: set[str] = set()
        for step in parse_scenario(expiry_workload(400, 3), "g.toml").steps:
            if isinstance(step, WriteFact):
                written.add(step.key)
            elif isinstance(step, Query):
                assert step.key in written

    def test_it_runs_and_notes_and_promotions_expire(self) -> None:
        session = _run(expiry_workload(400, 4))
        gone = {
            session.state.store.facts[event.id].key.split(".")[0]
            for event in session.run.events
            if isinstance(event, Expired)
        }
        assert {"session", "promo"} == gone

    def test_a_longer_ttl_set_from_outside_keeps_the_notes(self) -> None:
        session = _run(expiry_workload(400, 4), "forgetting.ttl=1e9", "forgetting.policy=lru")
        gone = {
            session.state.store.facts[event.id].key.split(".")[0]
            for event in session.run.events
            if isinstance(event, Expired)
        }
        assert {"promo"} == gone

    def test_generate_expiry_writes_the_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "expiry.toml"
        argv = ["generate", "expiry", "--steps", "50", "--seed", "3", "--out", str(out)]
        assert 0 == main(argv)
        assert expiry_workload(50, 3) == out.read_text("utf-8")
        assert f"wrote {out}\n" == capsys.readouterr().out

    def test_a_bad_count_is_one_line_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "expiry.toml"
        argv = ["generate", "expiry", "--steps", "0", "--seed", "3", "--out", str(out)]
        assert 2 == main(argv)
        err = capsys.readouterr().err
        assert (False, 1) == (out.exists(), len(err.splitlines()))
        assert "--steps must be an integer in 1..10000000, got 0" in err
