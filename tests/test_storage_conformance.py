"""memtape.storage: one conformance suite, run against every backend."""

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape import __version__
from memtape.core.chain import Chain, Signature
from memtape.core.codec import command_data, event_data
from memtape.core.commands import AddTurn, AdvanceClock, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import ClockAdvanced, Evicted, TurnAdded
from memtape.core.logfile import FORMAT, RunFile, read_run
from memtape.core.run import Run
from memtape.policies.session import Session
from memtape.runs.files import load_run
from memtape.scenarios import SHIPPED, load_scenario
from memtape.storage import Conflict, RunStore, open_store
from memtape.storage.base import stamped_header

BACKENDS = {"jsonl": "run.jsonl", "sqlite": "runs.db"}


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    return {name: _session(name) for name in SHIPPED}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    with open_store(tmp_path / BACKENDS[request.param], create=True) as opened:
        yield opened


def _header(session: Session, scenario: str) -> dict[str, Any]:
    return {"scenario": scenario, "policies": session.policies.params()}


def _record(store: RunStore, run: Run, header: dict[str, Any]) -> int:
    run_id = store.create(header)
    position = 0
    for step, command in enumerate(run.commands, start=1):
        start, end = run.batch(step)
        position = store.append(run_id, command, run.events[start:end], position)
    return run_id


def _head(header: dict[str, Any], run: Run) -> str:
    """The head of ``run``'s chain, computed here from the records a run file's lines hold."""
    chain = Chain.of(stamped_header(header))
    for step, command in enumerate(run.commands, start=1):
        start, end = run.batch(step)
        for at in range(start + 1, end + 1):
            event = run.events[at - 1]
            record: dict[str, Any] = {
                "at": at,
                "step": step,
                "type": type(event).__name__,
                "v": event.VERSION,
                "event": event_data(event),
            }
            if at == start + 1:
                record["command"] = command_data(command)
            if at == end:
                record["end"] = True
            chain.add(record)
    return chain.head


TURN = AddTurn("user", "hello")
TURN_EVENT = TurnAdded(1, "user", "hello", 2, False)


class TestStoreConformance:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_shipped_run_reads_back_equal(
        self, store: RunStore, sessions: dict[str, Session], name: str
    ) -> None:
        run = sessions[name].run
        header = _header(sessions[name], name)
        run_id = _record(store, run, header)

        recorded = store.read(run_id)

        assert run.events == tuple(e for b in recorded.batches for e in b.events)
        assert run.commands == tuple(batch.command for batch in recorded.batches)
        assert list(range(1, run.steps + 1)) == [batch.step for batch in recorded.batches]
        assert [run.batch(s)[0] + 2 for s in range(1, run.steps + 1)] == [
            batch.line for batch in recorded.batches
        ]
        expected_header = {
            "memtape": "run",
            "format": FORMAT,
            "version": __version__,
            **header,
            "events": len(run),
            "steps": run.steps,
            "chain": _head(header, run),
        }
        assert expected_header == recorded.header
        assert recorded.torn is None

    def test_the_newest_run_is_read_when_no_id_is_given(
        self, store: RunStore, sessions: dict[str, Session]
    ) -> None:
        session = sessions["dana-facts"]
        run_id = _record(store, session.run, _header(session, "dana-facts"))

        assert store.read(run_id) == store.read()

    def test_append_returns_contiguous_positions(self, store: RunStore) -> None:
        run_id = store.create({"scenario": "s"})

        first = store.append(run_id, TURN, (TURN_EVENT,), 0)
        second = store.append(
            run_id, AdvanceClock(2.0), (ClockAdvanced(1.0), ClockAdvanced(2.0)), first
        )

        assert (1, 3) == (first, second)
        assert [(1, 2), (2, 3)] == [(b.step, b.line) for b in store.read(run_id).batches]

    @pytest.mark.parametrize("stale", [0, 2, 5])
    def test_a_stale_expected_position_is_a_conflict_and_changes_nothing(
        self, store: RunStore, stale: int
    ) -> None:
        run_id = store.create({"scenario": "s"})
        store.append(run_id, TURN, (TURN_EVENT,), 0)
        before = store.read(run_id)

        with pytest.raises(Conflict, match=f"expected to append after event {stale}"):
            store.append(run_id, AdvanceClock(1.0), (ClockAdvanced(1.0),), stale)

        assert before == store.read(run_id)

    def test_a_conflict_is_bad_input(self) -> None:
        assert issubclass(Conflict, BadInput)

    def test_an_empty_batch_is_refused(self, store: RunStore) -> None:
        run_id = store.create({"scenario": "s"})

        with pytest.raises(BadInput, match="at least one event"):
            store.append(run_id, TURN, (), 0)

        assert () == store.read(run_id).batches

    def test_an_empty_run_reads_as_no_batches(self, store: RunStore) -> None:
        run_id = store.create({"scenario": "empty", "policies": {}})

        recorded = store.read(run_id)

        assert (
            RunFile(
                {
                    "memtape": "run",
                    "format": FORMAT,
                    "version": __version__,
                    "scenario": "empty",
                    "policies": {},
                    "events": 0,
                    "steps": 0,
                    "chain": Chain.of(stamped_header({"scenario": "empty", "policies": {}})).head,
                },
                (),
            )
            == recorded
        )

    def test_floats_round_trip_exactly(self, store: RunStore) -> None:
        tricky = [0.1 + 0.2, 1 / 3, 5e-324, 1.7976931348623157e308, -0.0, 2.0**53 + 1]
        run_id = store.create({"scenario": "floats"})
        # A score holds any finite float (an importance only those in [0, 1]).
        events = tuple(Evicted(i, x) for i, x in enumerate(tricky, start=1))
        store.append(run_id, WriteFact("k", "t", 1 / 7), events, 0)
        store.append(run_id, AdvanceClock(1e-9), (Evicted(1, 0.1 + 0.7),), len(events))

        batches = store.read(run_id).batches

        assert tricky == [e.score for e in batches[0].events if isinstance(e, Evicted)]
        assert [math.copysign(1, x) for x in tricky] == [
            math.copysign(1, e.score) for e in batches[0].events if isinstance(e, Evicted)
        ]
        assert WriteFact("k", "t", 1 / 7) == batches[0].command
        assert (AdvanceClock(1e-9), (Evicted(1, 0.1 + 0.7),)) == (
            batches[1].command,
            batches[1].events,
        )

    def test_texts_round_trip_whatever_their_characters(self, store: RunStore) -> None:
        text = 'naïve "quotes" \\ back\nslash, 日本語, \u2028, emoji 🧠, nul \x00'
        run_id = store.create({"scenario": text})
        store.append(run_id, AddTurn("user", text), (TurnAdded(1, "user", text, 9, True),), 0)

        recorded = store.read(run_id)

        assert (text, AddTurn("user", text)) == (
            recorded.header["scenario"],
            recorded.batches[0].command,
        )

    def test_runs_lists_the_run_with_its_scenario_policies_and_size(
        self, store: RunStore, sessions: dict[str, Session]
    ) -> None:
        session = sessions["refund-desk"]
        run_id = _record(store, session.run, _header(session, "refund-desk"))

        [info] = store.runs()

        assert (run_id, "refund-desk", session.policies.params(), len(session.run)) == (
            info.id,
            info.scenario,
            info.policies,
            info.events,
        )
        assert info.created[:4].isdigit()

    def test_an_unknown_run_id_is_bad_input_naming_the_file_and_id(self, store: RunStore) -> None:
        store.create({"scenario": "s"})

        with pytest.raises(BadInput, match=r"no run #?77\b") as caught:
            store.read(77)

        assert str(store.path) in str(caught.value)


class TestChainConformance:
    def test_a_recorded_run_verifies_chained_and_unsigned(
        self, store: RunStore, sessions: dict[str, Session]
    ) -> None:
        session = sessions["sleep-pass"]
        run_id = _record(store, session.run, _header(session, "sleep-pass"))

        verdict = store.verify(run_id, None)

        assert (True, None, Signature.NONE) == (
            verdict.chained,
            verdict.broken,
            verdict.signature,
        )

    def test_a_run_recorded_with_the_key_is_signed(
        self, store: RunStore, sessions: dict[str, Session], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "k")
        session = sessions["dana-facts"]
        run_id = _record(store, session.run, _header(session, "dana-facts"))
        monkeypatch.delenv("MEMTAPE_SIGNING_KEY")

        assert (Signature.VALID, Signature.INVALID, Signature.UNVERIFIED) == (
            store.verify(run_id, b"k").signature,
            store.verify(run_id, b"other").signature,
            store.verify(run_id, None).signature,
        )

    def test_with_the_key_an_unsigned_run_is_not_appended_to(
        self, store: RunStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The append would sign a new head, and so the events no signature vouched for (a
        stripped run's edit among them)."""
        run_id = store.create({"scenario": "s"})
        store.append(run_id, TURN, (TURN_EVENT,), 0)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "k")

        with pytest.raises(BadInput, match="not signing an append to an unsigned run"):
            store.append(run_id, AdvanceClock(1.0), (ClockAdvanced(1.0),), 1)
        assert 1 == len(store.read(run_id).batches)

    def test_with_the_key_an_empty_unsigned_run_is_appended_to_and_signed(
        self, store: RunStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        run_id = store.create({"scenario": "s"})
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "k")
        store.append(run_id, TURN, (TURN_EVENT,), 0)
        store.append(run_id, AdvanceClock(1.0), (ClockAdvanced(1.0),), 1)

        assert Signature.VALID == store.verify(run_id, b"k").signature

    def test_a_chain_copied_into_a_header_is_not_kept(self, store: RunStore) -> None:
        """A header read from another run carries that run's head; the new run has its own."""
        header = {"scenario": "s", "policies": {}}
        run_id = store.create({**header, "chain": "0" * 64, "signature": "1" * 64})

        recorded = store.read(run_id).header

        assert (Chain.of(stamped_header(header)).head, False) == (
            recorded["chain"],
            "signature" in recorded,
        )


class TestJsonlStore:
    def test_its_file_is_a_run_file_that_loads(
        self, tmp_path: Path, sessions: dict[str, Session]
    ) -> None:
        session = sessions["sleep-pass"]
        path = tmp_path / "run.jsonl"
        with open_store(path, create=True) as store:
            _record(store, session.run, _header(session, "sleep-pass"))

        assert read_run(path).batches == open_store(path).read().batches
        assert session.run.events == load_run(path).session.run.events

    def test_a_missing_file_is_bad_input_unless_created(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="no such run file"):
            open_store(tmp_path / "missing.jsonl")

    def test_a_file_whose_chain_is_broken_is_not_appended_to(self, tmp_path: Path) -> None:
        """Appending rewrites the file chained afresh, which would hide the edit."""
        path = tmp_path / "run.jsonl"
        with open_store(path, create=True) as store:
            store.append(store.create({"scenario": "s"}), TURN, (TURN_EVENT,), 0)
        path.write_text(path.read_text("utf-8").replace('"hello"', '"howdy"'), "utf-8")
        before = path.read_bytes()

        with pytest.raises(BadInput) as caught:
            open_store(path).append(1, AdvanceClock(1.0), (ClockAdvanced(1.0),), 1)

        assert (
            f"{path}: not appending to a run whose chain is broken: line 2 breaks the chain: "
            "it, or the header, was changed after the run was written"
        ) == str(caught.value)
        assert before == path.read_bytes()

    def test_a_file_whose_signature_does_not_match_is_not_appended_to(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "run.jsonl"
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "one key")
        with open_store(path, create=True) as store:
            store.append(store.create({"scenario": "s"}), TURN, (TURN_EVENT,), 0)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "another key")

        with pytest.raises(BadInput, match="not appending to a run whose signature does not"):
            open_store(path).append(1, AdvanceClock(1.0), (ClockAdvanced(1.0),), 1)

    def test_a_file_written_before_the_chain_is_chained_by_an_append(self, tmp_path: Path) -> None:
        path = tmp_path / "run.jsonl"
        with open_store(path, create=True) as store:
            store.append(store.create({"scenario": "s"}), TURN, (TURN_EVENT,), 0)
        lines = path.read_text("utf-8").splitlines()
        stripped = [json.loads(line) for line in lines]
        stripped[0].pop("chain")
        stripped[1].pop("h")
        path.write_text("".join(json.dumps(line) + "\n" for line in stripped), "utf-8")
        assert False is open_store(path).verify(1, None).chained

        open_store(path).append(1, AdvanceClock(1.0), (ClockAdvanced(1.0),), 1)

        verdict = open_store(path).verify(1, None)
        assert (True, None) == (verdict.chained, verdict.broken)

    def test_a_torn_file_is_not_appended_to(self, tmp_path: Path) -> None:
        path = tmp_path / "run.jsonl"
        with open_store(path, create=True) as store:
            store.append(store.create({"scenario": "s"}), TURN, (TURN_EVENT,), 0)
        path.write_text(path.read_text("utf-8") + '{"at": 2, "ste', "utf-8")
        before = path.read_bytes()

        with pytest.raises(BadInput, match="not appending to a torn tail"):
            open_store(path).append(1, AdvanceClock(1.0), (ClockAdvanced(1.0),), 1)

        assert before == path.read_bytes()
