"""memtape.checking.check: checking a run file's integrity, chain, invariants and re-decision."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtape.checking.check import CheckReport, check_file
from memtape.checking.invariants import Violation, check_capacity
from memtape.cli import main
from memtape.core.chain import Signature
from memtape.core.commands import WriteFact
from memtape.core.errors import BadInput
from memtape.core.state import Store
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.runs.files import save_run
from memtape.scenarios import SHIPPED, load_scenario
from tests.chained import (
    forged_past_head,
    lines_of,
    rechained,
    stripped,
    unchained,
    write_lines,
)

Line = dict[str, Any]


def saved(tmp_path: Path, name: str) -> Path:
    """The run of the shipped scenario ``name``, written to a file."""
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    path = tmp_path / f"{name}.jsonl"
    save_run(session, path, scenario.name)
    return path


def edited(path: Path, number: int, edit: Callable[[Line], None]) -> Path:
    """``path`` with its line ``number`` (1: the header) changed by ``edit``, in place, and
    its chain recomputed: what the kernel's checks catch even then (``TestChain`` edits
    without recomputing)."""
    lines = lines_of(path)
    edit(lines[number - 1])
    return write_lines(path, rechained(lines))


def set_field(field: str, value: Any) -> Callable[[Line], None]:
    """An edit setting one field of an event line's event."""

    def edit(line: Line) -> None:
        line["event"][field] = value

    return edit


class TestCleanRuns:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_recorded_seed_scenario_checks_out(self, tmp_path: Path, name: str) -> None:
        """Each shipped scenario, saved and checked, is ok with no problem and re-decided."""
        report = check_file(saved(tmp_path, name))
        assert (True, (), True, name) == (
            report.ok,
            report.problems,
            report.redecided,
            report.scenario,
        )

    def test_a_clean_report_says_so_in_one_line(self, tmp_path: Path) -> None:
        """The line names the file and its size."""
        path = saved(tmp_path, "refund-desk")
        expected = [
            f"{path}: ok: 15 events in 10 steps fold and keep every invariant, re-decides to "
            "itself; its chain holds, unsigned"
        ]
        assert expected == check_file(path).lines()

    def test_a_fork_that_lowers_the_capacity_checks_out(self, tmp_path: Path) -> None:
        """A capacity lowered from a point binds the writes decided under it: the facts
        already active stay until a write evicts, and a read between is no breach."""
        source, fork = saved(tmp_path, "dana-facts"), tmp_path / "fork.jsonl"
        settings = ["--set", "forgetting.capacity=3"]
        assert 0 == main(["fork", str(source), "--at", "5", *settings, "--out", str(fork)])

        report = check_file(fork)
        assert (True, ()) == (report.ok, report.problems)


class TestCapacity:
    def test_a_command_that_adds_past_the_capacity_breaks_it(self) -> None:
        store = _store_of(4)
        assert ["capacity"] == [v.invariant for v in check_capacity(store, 3, at=7, before=3)]

    def test_a_command_that_adds_nothing_keeps_an_older_excess(self) -> None:
        assert [] == check_capacity(_store_of(4), 3, at=7, before=4)


def _store_of(active: int) -> Store:
    """A store of ``active`` facts, written at t=0 through the seed's forgetting policy."""
    session = Session(Policies(forgetting=ImportanceRecencyAccess(active, 4.0, 0.1)))
    for number in range(active):
        session.execute(WriteFact(f"k{number}", "a fact", 0.5))
    return session.state.store


class TestHandEditedRuns:
    def test_a_hand_edited_token_count_is_caught_by_re_deciding_at_its_position(
        self, tmp_path: Path
    ) -> None:
        """Turn 4 of refund-desk edited from 12 to 13 tokens still folds; the first problem is
        at event 4, from re-deciding, naming the field and both values."""
        path = saved(tmp_path, "refund-desk")
        lines = path.read_text("utf-8").splitlines()
        assert '"turn": 4' in lines[4]
        assert '"tokens": 12' in lines[4]
        edited(path, 5, set_field("tokens", 13))
        report = check_file(path)
        message = "step 4 (AddTurn): the log's TurnAdded has tokens 13 where the policies decide 12"
        assert (False, Violation(4, "re-decide", message)) == (report.ok, report.first)

    def test_the_edit_also_breaks_the_budget_later_on(self, tmp_path: Path) -> None:
        """The extra token leaves the window over budget after turn 5, which the invariants
        report after the re-decision; the report lists both, first position first."""
        path = edited(saved(tmp_path, "refund-desk"), 5, set_field("tokens", 13))
        expected = [
            f"{path}: event 4: re-decide: step 4 (AddTurn): the log's TurnAdded has tokens 13 "
            "where the policies decide 12",
            f"{path}: event 6: budget: the window holds 41 tokens, over the budget of 40, "
            "though the policy could keep as few as 24",
        ]
        assert expected == check_file(path).lines()

    def test_an_event_that_does_not_fold_is_reported_with_its_step_and_line(
        self, tmp_path: Path
    ) -> None:
        """Turn 5 renumbered 7 cannot follow turn 4: an integrity problem at event 6, and the
        run before it checks out."""
        path = edited(saved(tmp_path, "refund-desk"), 7, set_field("turn", 7))
        message = "step 5 (from line 7): TurnAdded: turn 7 cannot follow turn 4"
        report = check_file(path)
        assert ((Violation(6, "integrity", message),), 15) == (report.problems, report.events)

    def test_a_store_edit_that_still_folds_is_caught(self, tmp_path: Path) -> None:
        """dana-facts' promo written with importance 0.05 makes it, not chitchat, the weakest:
        the eviction breaks its invariant, and re-deciding disagrees with the write."""
        path = edited(saved(tmp_path, "dana-facts"), 11, set_field("importance", 0.05))
        report = check_file(path)
        assert [(10, "re-decide"), (11, "eviction")] == [
            (p.position, p.invariant) for p in report.problems
        ]


class TestHeaders:
    def test_policies_that_cannot_be_built_are_a_problem_at_the_header(
        self, tmp_path: Path
    ) -> None:
        """A budget of 0 is reported at position 0; the log is still checked, not re-decided."""

        def zero_budget(header: Line) -> None:
            header["policies"]["compaction"]["budget"] = 0

        report = check_file(edited(saved(tmp_path, "refund-desk"), 1, zero_budget))
        message = "policies: [compaction]: budget must be an integer >= 1, got 0"
        assert ((Violation(0, "header", message),), False) == (report.problems, report.redecided)

    def test_a_header_without_policies_is_a_problem(self, tmp_path: Path) -> None:
        """No policies to check against: reported at the header."""
        report = check_file(
            edited(saved(tmp_path, "sleep-pass"), 1, lambda header: header.pop("policies"))
        )
        expected = (Violation(0, "header", "the header names no policies"),)
        assert expected == report.problems

    def test_bad_epochs_name_the_file_once(self, tmp_path: Path) -> None:
        """The report's line names the file; the problem itself does not name it again."""

        def bad_epochs(header: Line) -> None:
            header["epochs"] = "bad"

        path = edited(saved(tmp_path, "refund-desk"), 1, bad_epochs)
        expected = [f"{path}: header: epochs: a list of {{from, policies}} tables"]
        assert expected == check_file(path).lines()

    def test_the_header_line_reads_as_the_header(self, tmp_path: Path) -> None:
        """A problem at position 0 prints as the header's, not an event's."""
        report = CheckReport(
            Path("run.jsonl"), "x", 0, 0, False, (Violation(0, "header", "no policies"),)
        )
        assert ["run.jsonl: header: no policies"] == report.lines()


class TestUnreadableFiles:
    def test_a_missing_file_is_bad_input(self, tmp_path: Path) -> None:
        """A file that cannot be opened raises, for the command to exit 2."""
        with pytest.raises(BadInput, match="no such run file"):
            check_file(tmp_path / "missing.jsonl")

    def test_a_line_that_is_not_json_is_bad_input(self, tmp_path: Path) -> None:
        """A file that cannot be read as a run raises, naming the line."""
        path = saved(tmp_path, "dana-facts")
        lines = path.read_text("utf-8").splitlines()
        lines[3] = "{not json"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        with pytest.raises(BadInput, match="line 4: not JSON"):
            check_file(path)


def unimportable_header(header: Line) -> None:
    """An edit naming the compaction policy by an import path that imports nowhere."""
    header["policies"]["compaction"]["policy"] = "nowhere_at_all:Policy"


def unimportable_first_epoch(header: Line) -> None:
    """An edit adding epochs whose first names an import path that imports nowhere."""
    first = {"compaction": {"policy": "nowhere_at_all:Policy", "budget": 40}}
    header["epochs"] = [
        {"from": 0, "policies": first},
        {"from": 5, "policies": header["policies"]},
    ]


class TestUnbuildablePolicies:
    @pytest.mark.parametrize("edit", [unimportable_header, unimportable_first_epoch])
    def test_an_import_path_that_does_not_import_is_bad_input(
        self, tmp_path: Path, edit: Callable[[Line], None]
    ) -> None:
        """The run may be fine where its policy imports: here it cannot be checked at all,
        so it is no problem in the run (exit 1) but a file that cannot be read (exit 2)."""
        path = edited(saved(tmp_path, "refund-desk"), 1, edit)
        with pytest.raises(BadInput) as raised:
            check_file(path, trust=True)
        message = str(raised.value)
        assert message.startswith(f"{path}: header: ")
        assert "cannot import nowhere_at_all" in message
        assert message.endswith("(so the run cannot be checked here)")

    def test_check_exits_2_with_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = edited(saved(tmp_path, "refund-desk"), 1, unimportable_header)
        status = main(["check", "--trust", str(path)])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert captured.err.startswith(f"memtape: error: {path}: header: policies: [compaction]")


class TestDeterminism:
    def test_a_policy_reading_the_wall_clock_is_reported(self, tmp_path: Path) -> None:
        """A run of a policy that stamps turns with time.time() may re-decide to itself (within
        the same second), but never in two made-up worlds."""
        scenario = tmp_path / "s.toml"
        scenario.write_text(
            '[compaction]\npolicy = "tests.broken_policies:StampsTurns"\nbudget = 40\n\n'
            '[[step]]\nturn = "user"\ntext = "hi"\n'
        )
        out = tmp_path / "run.jsonl"
        assert 0 == main(["run", str(scenario), "--out", str(out)])
        problems = check_file(out, trust=True).problems
        assert (1, "determinism") in [(p.position, p.invariant) for p in problems]


def plainly_edited(path: Path, edit: Callable[[list[Line]], object], *, chain: bool = True) -> Path:
    """``path`` with its lines changed by ``edit`` as JSON and nothing recomputed; without
    ``chain``, the file is first stripped of its chain (as a run written before it)."""
    lines = lines_of(path)
    if not chain:
        unchained(lines)
    edit(lines)
    return write_lines(path, lines)


def new_fact_text(lines: list[Line]) -> None:
    """dana-facts' order fact (line 4) says another order, in its event and its command."""
    text = "Dana's order is ORD-9999, for $900."
    lines[3]["event"]["text"] = lines[3]["command"]["text"] = text


def new_turn_text(lines: list[Line]) -> None:
    """refund-desk's first turn (line 2) says other words, as many, in its event and command."""
    text = "Hi, this is Erin. Can you look up order ORD-9999?"
    lines[1]["event"]["text"] = lines[1]["command"]["text"] = text


def renamed_scenario(lines: list[Line]) -> None:
    """The header names another scenario."""
    lines[0]["scenario"] = "another-desk"


def last_command_cut(lines: list[Line]) -> None:
    """refund-desk's last command (turn 10 and its compaction, lines 15 and 16) cut, and the
    header's counts made to agree."""
    del lines[-2:]
    lines[0]["events"], lines[0]["steps"] = 13, 9


SELF_CONSISTENT_EDITS = {
    "fact text": (
        "dana-facts",
        new_fact_text,
        3,
        "line 4 breaks the chain: it, or the header "
        "or an event before it, was changed after the run was written",
    ),
    "turn text": (
        "refund-desk",
        new_turn_text,
        1,
        "line 2 breaks the chain: it, or the header, was changed after the run was written",
    ),
    "scenario": (
        "refund-desk",
        renamed_scenario,
        1,
        "line 2 breaks the chain: it, or the header, was changed after the run was written",
    ),
    "cut": (
        "refund-desk",
        last_command_cut,
        13,
        "line 14 is the last, but its link is not the "
        "header's chain head: events were cut from the end, or the head was changed",
    ),
}
"""The security trial's four edits that agree with themselves: the scenario, the edit, and
the chain problem's position and message."""


class TestChain:
    @pytest.mark.parametrize("name", sorted(SELF_CONSISTENT_EDITS))
    def test_an_edit_that_agrees_with_itself_passes_without_a_chain(
        self, tmp_path: Path, name: str
    ) -> None:
        """Why the chain is needed: on an unchained file each edit checks out."""
        scenario, edit, _, _ = SELF_CONSISTENT_EDITS[name]
        report = check_file(plainly_edited(saved(tmp_path, scenario), edit, chain=False))
        assert (True, False) == (report.ok, report.chained)

    @pytest.mark.parametrize("name", sorted(SELF_CONSISTENT_EDITS))
    def test_an_edit_that_agrees_with_itself_breaks_the_chain_where_it_was_made(
        self, tmp_path: Path, name: str
    ) -> None:
        scenario, edit, position, message = SELF_CONSISTENT_EDITS[name]
        report = check_file(plainly_edited(saved(tmp_path, scenario), edit))
        assert (Violation(position, "chain", message),) == report.problems

    def test_check_exits_1_naming_the_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = plainly_edited(saved(tmp_path, "dana-facts"), new_fact_text)
        status = main(["check", str(path)])
        expected = (
            f"{path}: event 3: chain: line 4 breaks the chain: it, or the header or an event "
            "before it, was changed after the run was written\n"
        )
        assert (1, expected) == (status, capsys.readouterr().out)

    def test_a_clean_run_says_its_chain_holds(self, tmp_path: Path) -> None:
        [line] = check_file(saved(tmp_path, "sleep-pass")).lines()
        assert line.endswith("re-decides to itself; its chain holds, unsigned")

    def test_an_unchained_run_says_so_and_exits_0(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = plainly_edited(saved(tmp_path, "refund-desk"), unchained)
        status = main(["check", str(path)])
        expected = (
            f"{path}: ok: 15 events in 10 steps fold and keep every invariant, re-decides to "
            "itself; unchained (written before memtape chained its logs)\n"
        )
        assert (0, expected) == (status, capsys.readouterr().out)

    def test_a_line_without_its_link_is_a_problem(self, tmp_path: Path) -> None:
        path = plainly_edited(saved(tmp_path, "refund-desk"), lambda lines: lines[5].pop("h"))
        message = "line 6 has no link, though the header heads a chain"
        assert (Violation(5, "chain", message),) == check_file(path).problems

    def test_a_removed_head_is_a_problem_while_lines_carry_links(self, tmp_path: Path) -> None:
        path = plainly_edited(saved(tmp_path, "refund-desk"), lambda lines: lines[0].pop("chain"))
        message = "line 2 carries a link, but the header has no chain head (it was removed)"
        report = check_file(path)
        assert ((Violation(0, "chain", message),), True) == (report.problems, report.chained)

    def test_a_head_that_is_not_hex_is_a_problem(self, tmp_path: Path) -> None:
        def bad_head(lines: list[Line]) -> None:
            lines[0]["chain"] = "z" * 64

        report = check_file(plainly_edited(saved(tmp_path, "refund-desk"), bad_head))
        message = f"the chain head must be 64 lowercase hex digits, got {'z' * 64!r}"
        assert (Violation(0, "chain", message),) == report.problems

    def test_a_reformatted_file_still_holds(self, tmp_path: Path) -> None:
        """The chain hashes values, not spelling: keys reordered and spaces dropped."""
        path = saved(tmp_path, "dana-facts")
        lines = lines_of(path)
        path.write_text(
            "".join(
                json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n" for line in lines
            )
        )
        assert () == check_file(path).problems

    def test_a_torn_tail_after_the_head_is_one_problem_not_also_a_broken_chain(
        self, tmp_path: Path
    ) -> None:
        path = saved(tmp_path, "refund-desk")
        path.write_text(path.read_text("utf-8") + '{"at": 16, "st', "utf-8")
        assert ["integrity"] == [p.invariant for p in check_file(path).problems]

    def test_a_command_cut_short_breaks_the_chain_at_the_last_whole_one(
        self, tmp_path: Path
    ) -> None:
        """No writer leaves a chained run cut inside it: the last whole command must end at the
        head, torn tail or not."""
        path = plainly_edited(saved(tmp_path, "refund-desk"), lambda lines: lines.pop())
        message = (
            "line 14 is the last, but its link is not the header's chain head: events were cut "
            "from the end, or the head was changed"
        )
        assert (Violation(13, "chain", message),) == check_file(path).problems


KEY = "a key only the checker knows"


class TestSignature:
    def _signed(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        path = saved(tmp_path, "dana-facts")
        monkeypatch.delenv("MEMTAPE_SIGNING_KEY")
        return path

    def test_a_signed_run_checks_valid_with_the_key(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._signed(tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        [line] = check_file(path).lines()
        assert line.endswith("; its chain holds, signed with a valid signature")

    def test_without_the_key_it_is_signed_but_not_verified(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        report = check_file(self._signed(tmp_path, monkeypatch))
        assert (True, Signature.UNVERIFIED) == (report.ok, report.signature)
        assert report.lines()[0].endswith(
            "; its chain holds, signed but not verified (MEMTAPE_SIGNING_KEY is not set)"
        )

    def test_the_key_is_written_nowhere(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._signed(tmp_path, monkeypatch)
        assert KEY.encode() not in path.read_bytes()
        assert 64 == len(lines_of(path)[0]["signature"])

    def test_an_edit_chained_again_without_the_key_is_caught_with_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The attacker recomputes every link and the head; the signature cannot follow."""
        path = self._signed(tmp_path, monkeypatch)
        lines = lines_of(path)
        new_fact_text(lines)
        write_lines(path, rechained(lines))
        assert (True, Signature.UNVERIFIED) == (
            check_file(path).ok,
            check_file(path).signature,
        )
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        message = (
            "the signature does not match the chain head under MEMTAPE_SIGNING_KEY: the run was "
            "changed and chained again by someone without the key, or signed with another key"
        )
        assert (Violation(0, "signature", message),) == check_file(path).problems

    def test_another_key_does_not_verify_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._signed(tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "another key")
        assert Signature.INVALID == check_file(path).signature

    def test_a_removed_signature_is_named_when_the_key_is_set(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An editor who drops the signature leaves an unsigned run: the line says what that
        may mean when the checker expects signatures."""
        path = self._signed(tmp_path, monkeypatch)
        lines = lines_of(path)
        new_fact_text(lines)
        del lines[0]["signature"]
        write_lines(path, rechained(lines))
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        [line] = check_file(path).lines()
        assert line.endswith(
            "; its chain holds, unsigned (though MEMTAPE_SIGNING_KEY is set: a removed "
            "signature looks the same, and --require-signed fails it)"
        )


def signed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "dana-facts") -> Path:
    """The run of ``name`` written signed under ``KEY``; the key is unset again after."""
    monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
    path = saved(tmp_path, name)
    monkeypatch.delenv("MEMTAPE_SIGNING_KEY")
    return path


class TestForgedPastTheHead:
    """Issue 28: whole commands chained on after a signed run's head, then one junk line."""

    FORGED = (
        "line 13 and the events after it come after the header's chain head (line 12 ends the "
        "run): they were added after the run was written, and are not part of it"
    )

    def test_check_with_the_key_reports_the_forged_step_not_only_a_torn_tail(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = forged_past_head(signed(tmp_path, monkeypatch))
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        report = check_file(path)
        assert ((Violation(12, "chain", self.FORGED),), 11) == (report.problems, report.events)

    def test_check_without_the_key_reports_it_too(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = forged_past_head(signed(tmp_path, monkeypatch))
        assert (Violation(12, "chain", self.FORGED),) == check_file(path).problems

    def test_check_exits_1(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = forged_past_head(signed(tmp_path, monkeypatch))
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        assert (1, [f"{path}: event 12: chain: {self.FORGED}"]) == (
            main(["check", str(path)]),
            capsys.readouterr().out.splitlines(),
        )


class TestRequiredSignature:
    """Issue 28: ``--require-signed`` fails what a signature does not vouch for."""

    REQUIRED = "a signed run is required, but"

    def test_a_run_signed_with_the_key_passes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = signed(tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        assert () == check_file(path, require_signed=True).problems

    def test_an_unsigned_run_fails(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        path = saved(tmp_path, "dana-facts")
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        found = f"{self.REQUIRED} it is unsigned (a signature removed leaves it so)"
        assert (Violation(0, "signature", found),) == check_file(path, require_signed=True).problems

    def test_a_stripped_signature_fails_with_the_key_set(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The trial's attack: an edit chained again, its signature dropped. Unrequired, the
        check passes (and says a removed signature looks like this); required, it fails."""
        path = stripped(signed(tmp_path, monkeypatch), new_fact_text)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        found = f"{self.REQUIRED} it is unsigned (a signature removed leaves it so)"
        assert (True, (Violation(0, "signature", found),)) == (
            check_file(path).ok,
            check_file(path, require_signed=True).problems,
        )

    def test_a_run_signed_with_another_key_fails(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = signed(tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "another key")
        assert [(0, "signature")] == [
            (p.position, p.invariant) for p in check_file(path, require_signed=True).problems
        ]

    def test_an_unchained_run_fails(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        path = plainly_edited(saved(tmp_path, "dana-facts"), lambda lines: None, chain=False)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        found = (
            f"{self.REQUIRED} it is unchained (written before memtape chained its logs), "
            "so unsigned"
        )
        assert (Violation(0, "signature", found),) == check_file(path, require_signed=True).problems

    def test_without_the_key_nothing_can_pass(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = signed(tmp_path, monkeypatch)
        found = f"{self.REQUIRED} MEMTAPE_SIGNING_KEY is not set, so no signature can be verified"
        assert (Violation(0, "signature", found),) == check_file(path, require_signed=True).problems

    @pytest.mark.parametrize("how", ["flag", "environment"])
    def test_check_exits_1_with_one_line(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        how: str,
    ) -> None:
        path = saved(tmp_path, "dana-facts")
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        if how == "environment":
            monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        argv = ["check", str(path), *(["--require-signed"] if how == "flag" else [])]
        found = f"{self.REQUIRED} it is unsigned (a signature removed leaves it so)"
        assert (1, [f"{path}: header: {found}"]) == (
            main(argv),
            capsys.readouterr().out.splitlines(),
        )
