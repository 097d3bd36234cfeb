"""memtape.lab.importers.ledger: what an import read and wrote, and the refusal of a loss."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from memtape.lab.importers.ledger import Ledger, LeftOut, Tally
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Turns
from tests.transcripts import fixture

PATH = Path("s.jsonl")


def _source(count: int, skipped: tuple[str, ...] = ()) -> Source:
    return Source(
        PATH, tuple(Record({}, f"s.jsonl:{n}") for n in range(1, count + 1)), None, skipped
    )


def _turns() -> Turns:
    """A call and its result: turns from lines 1 and 2."""
    turns = Turns(PATH)
    turns.add("assistant", ["call f()"], "s.jsonl:1", calls=["c1"])
    turns.add("tool", ["42"], "s.jsonl:2", answers=["c1"])
    return turns


class TestTally:
    def test_a_balanced_import_closes_with_both_sides_counted(self) -> None:
        tally = Tally(_source(3, ("s.jsonl:4: a half-written last line (9 bytes)",)))
        tally.took("s.jsonl:1", calls=["c1"])
        tally.took("s.jsonl:2", results=["c1"])
        tally.left_out("progress", "s.jsonl:3")
        assert Ledger(
            4,
            2,
            1,
            1,
            1,
            1,
            (LeftOut("progress", 1),),
            ("s.jsonl:4: a half-written last line (9 bytes)",),
        ) == tally.close(_turns())

    def test_a_result_the_reader_lost_refuses_the_import_naming_it(self) -> None:
        """The file holds two results of c1's line... the reader imported one."""
        tally = Tally(_source(3))
        tally.took("s.jsonl:1", calls=["c1", "c2"])
        tally.took("s.jsonl:2", results=["c1"])
        tally.took("s.jsonl:3", results=["c2"])
        with pytest.raises(BadInput) as caught:
            tally.close(_turns())
        assert (
            "s.jsonl:1: tool call 'c2' is in the file but not in the imported turns: the import "
            "would lose it"
        ) == str(caught.value)

    def test_what_a_reader_left_out_on_purpose_is_no_loss(self) -> None:
        tally = Tally(_source(3))
        tally.took("s.jsonl:1", calls=["c1"])
        tally.took("s.jsonl:2", results=["c1"])
        tally.left_out("rewound branch", "s.jsonl:3", calls=["c9"], results=["c9"])
        ledger = tally.close(_turns())
        assert ((LeftOut("rewound branch", 1, 1, 1),), 2, 1) == (
            ledger.left_out,
            ledger.calls_in,
            ledger.calls_out,
        )

    def test_a_record_the_reader_did_not_account_for_refuses_the_import(self) -> None:
        tally = Tally(_source(3))
        tally.took("s.jsonl:1", calls=["c1"])
        tally.took("s.jsonl:2", results=["c1"])
        with pytest.raises(BadInput, match=r"^s.jsonl:3: this entry was neither imported nor"):
            tally.close(_turns())


class TestLedger:
    def test_its_lines_say_each_side_and_each_kind_left_out(self) -> None:
        ledger = Ledger(9, 5, 3, 3, 2, 2, (LeftOut("sidechain", 2, 1, 1),), ("s.jsonl:9: cut",))
        assert [
            "read 9 entries, wrote 5 turns",
            "tool calls: 3 in, 3 out, 1 in entries left out",
            "tool results: 2 in, 2 out, 1 in entries left out",
            "left out: 2 sidechain entries (holding 1 call and 1 result)",
            "skipped s.jsonl:9: cut",
        ] == ledger.lines()

    def test_its_table_is_the_scenario_s_import_table(self) -> None:
        ledger = Ledger(9, 5, 3, 3, 2, 2, (LeftOut("progress", 2),), (), (("c#2", "c"),))
        assert {
            "entries_read": 9,
            "turns_written": 5,
            "calls_in": 3,
            "calls_out": 3,
            "results_in": 2,
            "results_out": 2,
            "left_out": {"progress": 2},
            "calls_left_out": 0,
            "results_left_out": 0,
            "renamed_ids": {"c#2": "c"},
        } == ledger.table()


class TestEveryFormat:
    @pytest.mark.parametrize(
        "name",
        [
            "openai-chat.json",
            "openai-chat-reused-ids.jsonl",
            "openai-responses.jsonl",
            "anthropic.json",
            "langchain.json",
            "support-chat.jsonl",
            "claude-code-session.jsonl",
            "claude-code-parallel.jsonl",
        ],
    )
    def test_every_fixture_balances(self, name: str) -> None:
        transcript = read_transcript(fixture(name))
        ledger = transcript.ledger
        assert ledger is not None
        left_calls = sum(kind.calls for kind in ledger.left_out)
        left_results = sum(kind.results for kind in ledger.left_out)
        assert (ledger.calls_in, ledger.results_in, len(transcript.turns)) == (
            ledger.calls_out + left_calls,
            ledger.results_out + left_results,
            ledger.turns,
        )
