"""memtape.lab.probes and ``memtape import --probes``: probes for imported transcripts."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import re
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.lab import probes
from memtape.lab.importers import import_transcript, read_transcript
from memtape.lab.probes import auto_probes, candidates, planted, probes_from_file
from memtape.policies.session import Session
from memtape.projections.metrics import visible
from memtape.reducers import fold
from memtape.scenarios import Probe, load_scenario, parse_scenario

FIXTURE = Path(__file__).parent / "fixtures" / "support-chat.jsonl"
CODING = Path(__file__).parent / "fixtures" / "coding-chat.jsonl"


class TestPatterns:
    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("refund of $180.00 today", [("number", "$180.00")]),
            ("it costs €12, or 12,50 €", [("number", "€12"), ("number", "12,50 €")]),
            ("a total of $1,234.56", [("number", "$1,234.56")]),
            ("USD 40 or 30 GBP", [("number", "USD 40"), ("number", "30 GBP")]),
            (
                "weighs 3.5 kg and takes 45 minutes",
                [("number", "3.5 kg"), ("number", "45 minutes")],
            ),
            ("20% off a 40L pack", [("number", "20%"), ("number", "40L")]),
            ("arrives in 2-3 days at 30 °C", [("number", "2-3 days"), ("number", "30 °C")]),
            (
                "order GX-20418 and ORD-1234",
                [("identifier", "GX-20418"), ("identifier", "ORD-1234")],
            ),
            (
                "see JIRA-123 and ticket #4521",
                [("identifier", "JIRA-123"), ("identifier", "#4521")],
            ),
            (
                "account 12345678, PO PO12345",
                [("identifier", "12345678"), ("identifier", "PO12345")],
            ),
            ("customer cus_NffrFeUf2Hib", [("identifier", "cus_NffrFeUf2Hib")]),
            (
                "run 550e8400-e29b-41d4-a716-446655440000 failed",
                [("identifier", "550e8400-e29b-41d4-a716-446655440000")],
            ),
            (
                "edit src/app/main.py and ~/.bashrc",
                [("path", "src/app/main.py"), ("path", "~/.bashrc")],
            ),
            ("check /etc/hosts or ./run.sh", [("path", "/etc/hosts"), ("path", "./run.sh")]),
            ("write to priya.raman@example.com.", [("identifier", "priya.raman@example.com")]),
            ("see https://example.com/a?b=1, then", [("url", "https://example.com/a?b=1")]),
            (
                "(https://en.wikipedia.org/wiki/Tilde_(x)).",
                [("url", "https://en.wikipedia.org/wiki/Tilde_(x)")],
            ),
        ],
    )
    def test_each_pattern_finds_its_strings_as_written(
        self, text: str, found: list[tuple[str, str]]
    ) -> None:
        assert found == candidates(text)

    @pytest.mark.parametrize(
        "text",
        [
            "yes and/or no, open 24/7, shipped 2026/11/12, e.g./i.e. too",
            "card ending 4417 in 2026, page 12, 3.14159",
            "5 more minutes, version v2 GB, a 12-step plan",
            "ids call_1 and late_delivery and order_id, UTF and X-RAY",
            "the /compact command and src/memtape folders",
        ],
    )
    def test_what_is_not_a_probe(self, text: str) -> None:
        assert [] == candidates(text)

    def test_of_overlapping_matches_the_earliest_and_longest_wins(self) -> None:
        text = "track https://shop.example/orders/GX-20418 and RF-55902"
        expected = [("url", "https://shop.example/orders/GX-20418"), ("identifier", "RF-55902")]
        assert expected == candidates(text)

    def test_the_docstring_gives_every_pattern_as_the_code_has_it(self) -> None:
        # The docstring breaks a long pattern into ``pieces`` on several lines.
        written = re.sub(r"``\s*``", "", probes.__doc__ or "")
        assert [] == [name for name, template in probes.TEMPLATES if template not in written]


class TestCommands:
    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("run `make test` first", ["make test"]),
            ("then `git push origin main`.", ["git push origin main"]),
            (
                "try `./run.sh --fast` or `python3 -m memtape demo`",
                ["./run.sh --fast", "python3 -m memtape demo"],
            ),
            ("$ pytest -x tests/test_app.py\nok", ["pytest -x tests/test_app.py"]),
            ("output:\n  $ npm run build  \ndone", ["npm run build"]),
        ],
    )
    def test_a_program_with_arguments_in_code_or_after_a_prompt_is_a_command(
        self, text: str, found: list[str]
    ) -> None:
        assert [("command", string) for string in found] == candidates(text)

    @pytest.mark.parametrize(
        "text",
        [
            "the `git` binary and `make` alone",
            "a `config value` in code, `gitx status`",
            "I paid $ 12 for it",
            "```make test```",
        ],
    )
    def test_a_bare_program_or_other_code_is_no_command(self, text: str) -> None:
        assert [] == candidates(text)

    def test_a_path_inside_a_command_is_not_planted_from_it(self) -> None:
        found = candidates("run `pytest tests/test_app.py` then edit src/app.py")
        expected = [("command", "pytest tests/test_app.py"), ("path", "src/app.py")]
        assert expected == found


class TestMarkers:
    @pytest.mark.parametrize(
        ("text", "found"),
        [
            (
                "/home/dev/skills/SKILL.md-378-round half to even",
                [("path", "/home/dev/skills/SKILL.md")],
            ),
            ("/srv/app/main.py:42:    total = 0", [("path", "/srv/app/main.py")]),
            ("src/app.py:42:    return 10", [("path", "src/app.py")]),
            ("notes.md-12345-see GX-7", [("identifier", "GX-7")]),
            ("@@ -10040 +10041 @@ def round_total(rows):", []),
            (
                "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py",
                [("path", "src/x.py")] * 4,
            ),
            ("  12345→import os\n  12346\tprint(1)", []),
            ("commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", []),
            (
                "key: c2lnbmVkOmxlZGdlcjpleHBvcnQ6bmlnaHRseTp0b3RhbHM6djI+"
                "/aW52/cmVwb3J0/cm91bmQ6MjAyNg==",
                [],
            ),
            ("data: QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo+12345 end", []),
        ],
    )
    def test_markers_and_encodings_are_never_part_of_a_probe(
        self, text: str, found: list[tuple[str, str]]
    ) -> None:
        assert found == candidates(text)

    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("INV-2024-0042 is late", [("identifier", "INV-2024-0042")]),
            (
                "/home/dev/projects/ledger/src/components/widgets/index",
                [("path", "/home/dev/projects/ledger/src/components/widgets/index")],
            ),
            (
                "/home/dev/projects/ledger/src/components/widgets/Index2024Final/main.py",
                [
                    (
                        "path",
                        "/home/dev/projects/ledger/src/components/widgets/Index2024Final/main.py",
                    )
                ],
            ),
            (
                "see https://x.example/c/3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39AbCdEf0123456789x",
                [
                    (
                        "url",
                        "https://x.example/c/3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39AbCdEf0123456789x",
                    )
                ],
            ),
        ],
    )
    def test_what_only_looks_like_a_marker_is_kept(
        self, text: str, found: list[tuple[str, str]]
    ) -> None:
        assert found == candidates(text)


class TestConstraints:
    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("You are helpful. You must answer in English.", ["You must answer in English."]),
            ("- Never push to main.\n- Be kind.", ["Never push to main."]),
            ("1. ALWAYS run the tests first!", ["ALWAYS run the tests first!"]),
            (
                "## Rules\nDo not edit vendor/ files. Don't guess at totals?",
                ["Do not edit vendor/ files.", "Don't guess at totals?"],
            ),
        ],
    )
    def test_a_sentence_with_must_never_always_or_do_not_is_a_constraint(
        self, text: str, found: list[str]
    ) -> None:
        assert [("constraint", sentence) for sentence in found] == probes.constraints(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Be brief and look things up before answering.",
            "You must.",
            "Mustard is always yellow" + " and bright" * 25,
            "The donut is nevermore.",
        ],
    )
    def test_other_sentences_and_too_short_or_long_ones_are_not(self, text: str) -> None:
        assert [] == probes.constraints(text)

    def test_system_and_pinned_turns_give_constraints_and_no_other_turn_does(self) -> None:
        rule = "Never share the key."
        turns: list[probes.Turn] = [
            ("system", f"Hi. {rule}"),
            ("user", "You must reply in French, GX-1."),
            AddTurn("user", "Always cite src/app.py.", pin=True),
            ("assistant", "You must not."),
            ("user", "ok"),
        ]
        assert [
            Probe(rule, 2, "constraint"),
            Probe("GX-1", 3, "identifier"),
            Probe("Always cite src/app.py.", 4, "constraint"),
        ] == auto_probes(turns)


class TestDecisions:
    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("Ok. We decided to keep the v1 format.", ["We decided to keep the v1 format."]),
            ("Agreed, ship it on Friday.", ["Agreed, ship it on Friday."]),
            ("- Let's go with Postgres for now.", ["Let's go with Postgres for now."]),
            ("My decision is final here!", ["My decision is final here!"]),
        ],
    )
    def test_a_sentence_that_settles_something_is_a_decision(
        self, text: str, found: list[str]
    ) -> None:
        assert [("decision", sentence) for sentence in found] == probes.decisions(text)

    def test_user_and_assistant_turns_give_decisions_and_no_other_turn_does(self) -> None:
        turns: list[probes.Turn] = [
            ("system", "We decided on nothing yet."),
            ("tool", "the board agreed on the budget."),
            ("assistant", "We decided to drop the cache."),
            ("user", "ok"),
        ]
        assert [Probe("We decided to drop the cache.", 4, "decision")] == auto_probes(turns)

    def test_what_a_decision_names_is_planted_too_in_order_of_place(self) -> None:
        turns = [("user", "Fine: we decided to move src/app.py today, ORD-12."), ("user", "ok")]
        assert [
            Probe("Fine: we decided to move src/app.py today, ORD-12.", 2, "decision"),
            Probe("src/app.py", 2, "path"),
            Probe("ORD-12", 2, "identifier"),
        ] == auto_probes(turns)


class TestAutoProbes:
    def test_a_probe_is_due_from_the_turn_after_it_is_first_said(self) -> None:
        turns = [("user", "my order is GX-1"), ("assistant", "ok"), ("tool", "GX-1 ships; ORD-22")]
        expected = [Probe("GX-1", 2, "identifier"), Probe("ORD-22", 4, "identifier")]
        assert expected == auto_probes([*turns, ("user", "ok")])

    def test_a_string_first_said_in_the_last_turn_is_not_planted(self) -> None:
        assert [] == auto_probes([("user", "hello"), ("user", "my order is GX-1")])

    def test_assistant_and_system_turns_are_not_scanned(self) -> None:
        turns = [("system", "use ORD-1"), ("assistant", "ORD-2"), ("user", "ORD-3"), ("user", "x")]
        assert [Probe("ORD-3", 4, "identifier")] == auto_probes(turns)

    def test_a_string_said_again_is_planted_once_at_its_first_appearance(self) -> None:
        turns = [("user", "$5 and $5"), ("tool", "$5"), ("user", "x")]
        assert [Probe("$5", 2, "number")] == auto_probes(turns)

    def test_a_string_inside_another_is_planted_on_its_own_evidence(self) -> None:
        turns = [("user", "GX-1"), ("tool", "see https://a.example/GX-1"), ("user", "x")]
        expected = [Probe("GX-1", 2, "identifier"), Probe("https://a.example/GX-1", 3, "url")]
        assert expected == auto_probes(turns)

    def test_probes_come_in_the_order_of_first_appearance(self) -> None:
        turns = [("user", "B-2 then A-1"), ("tool", "C-3 and A-1"), ("user", "x")]
        assert ["B-2", "A-1", "C-3"] == [probe.text for probe in auto_probes(turns)]

    def test_turn_commands_give_the_probes_their_pairs_give(self) -> None:
        pairs = _pairs(FIXTURE)
        assert auto_probes(pairs) == auto_probes([AddTurn(role, text) for role, text in pairs])

    def test_the_fixture_s_user_and_tool_facts_are_planted(self) -> None:
        assert [
            ("GX-20418", 3),
            ("40L", 5),
            ("$129.00", 5),
            ("R-7", 13),
            ("5 days", 13),
            ("RF-55902", 17),
            ("$134.95", 17),
            ("$5.95", 17),
        ] == [(probe.text, probe.start) for probe in auto_probes(_pairs(FIXTURE))]

    def test_every_probe_is_in_the_turn_before_it_is_due(self) -> None:
        turns = _pairs(FIXTURE)
        for probe in auto_probes(turns):
            assert probe.text is not None
            assert probe.text in turns[probe.start - 2][1]


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


TURNS = [("user", "order GX-1 please"), ("tool", "GX-1 costs $5"), ("user", "thanks")]


class TestProbesFile:
    def test_a_toml_file_lists_probe_tables(self, tmp_path: Path) -> None:
        path = _file(
            tmp_path,
            "p.toml",
            '[[probe]]\ntext = "GX-1"\nfrom = 2\n\n[[probe]]\ntext = "$5"\nfrom = 3\n',
        )
        assert [Probe("GX-1", 2), Probe("$5", 3)] == probes_from_file(path, TURNS)

    def test_a_jsonl_file_lists_one_object_a_line(self, tmp_path: Path) -> None:
        path = _file(
            tmp_path, "p.jsonl", '{"text": "GX-1", "from": 2}\n\n{"text": "$5", "from": 3}\n'
        )
        assert [Probe("GX-1", 2), Probe("$5", 3)] == probes_from_file(path)

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("{oops", "p.jsonl:2: not a JSON object: "),
            ('["GX-1", 2]', 'p.jsonl:2: a probe is an object {"text": ..., "from": ...}'),
            ('{"text": "GX-1"}', "p.jsonl:2: missing parameter from"),
            ('{"text": "GX-1", "from": 0}', "p.jsonl:2: from must be an integer >= 1, got 0"),
            ('{"text": "GX-1", "from": "2"}', "p.jsonl:2: from must be an integer >= 1, got '2'"),
            ('{"text": "", "from": 2}', "p.jsonl:2: text must not be empty"),
            ('{"text": 7, "from": 2}', "p.jsonl:2: text must be a string, got 7"),
            ('{"text": "GX-1", "from": 2, "form": 3}', "p.jsonl:2: unknown parameter form"),
            (
                '{"text": "GX-1", "from": 4}',
                "p.jsonl:2: from 4 is past the transcript's last turn (3)",
            ),
            (
                '{"text": "GX-2", "from": 2}',
                "p.jsonl:2: text 'GX-2' occurs in no turn of the transcript",
            ),
        ],
    )
    def test_a_bad_jsonl_entry_names_file_line_and_field(
        self, tmp_path: Path, line: str, message: str
    ) -> None:
        path = _file(tmp_path, "p.jsonl", '{"text": "$5", "from": 3}\n' + line + "\n")
        with pytest.raises(BadInput) as caught:
            probes_from_file(path, TURNS)
        assert str(caught.value).startswith(f"{path.parent}/{message}")

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ('[[probe]]\ntext = "GX-1"\n', "p.toml: probe 1: missing parameter from"),
            (
                '[[probe]]\ntext = "GX-1"\nfrom = 2\n[[probe]]\nfrom = 2\n',
                "p.toml: probe 2: missing parameter text",
            ),
            ("probe = 3\n", "p.toml: probes are written as [[probe]] tables"),
            ('[[step]]\nturn = "user"\n', "p.toml: only [[probe]] tables, found step"),
            ("[[probe]\n", "p.toml: not valid TOML: "),
            ("", "p.toml: no probes"),
        ],
    )
    def test_a_bad_toml_file_names_the_entry_and_field(
        self, tmp_path: Path, text: str, message: str
    ) -> None:
        path = _file(tmp_path, "p.toml", text)
        with pytest.raises(BadInput) as caught:
            probes_from_file(path, TURNS)
        assert str(caught.value).startswith(f"{path.parent}/{message}")

    def test_a_file_of_another_kind_is_refused_naming_the_two(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match=r"--probes .*p\.json: write auto, or a file ending"):
            probes_from_file(_file(tmp_path, "p.json", "[]"))

    def test_planted_tables_are_what_the_writer_writes(self, tmp_path: Path) -> None:
        path = _file(tmp_path, "p.jsonl", '{"text": "$5", "from": 3}\n')
        assert (
            [],
            [{"text": "$5", "from": 3}],
            [
                {"text": "GX-1", "from": 2, "kind": "identifier"},
                {"text": "$5", "from": 3, "kind": "number"},
            ],
        ) == (
            planted(None, TURNS),
            planted(str(path), TURNS),
            planted("auto", TURNS),
        )


def _pairs(path: Path) -> list[tuple[str, str]]:
    """The ``(role, text)`` of each turn the transcript at ``path`` imports."""
    return [(turn.role, turn.text) for turn in read_transcript(path).turns]


def _support(tmp_path: Path, *options: str) -> Path:
    out = tmp_path / "support.toml"
    assert 0 == main(["import", str(FIXTURE), "--out", str(out), *options])
    return out


class TestImport:
    def test_a_coding_session_plants_typed_probes_and_no_marker(self) -> None:
        text = import_transcript(CODING, probes="auto", pin="system")
        assert [
            ("Never push to main.", 2, "constraint"),
            ("Always run `make test` before you commit.", 2, "constraint"),
            ("Do not edit files under vendor/.", 2, "constraint"),
            ("INV-2041", 3, "identifier"),
            ("src/ledger/export.py", 3, "path"),
            ("pytest tests/test_export.py -x", 3, "command"),
            ("/home/dev/ledger/src/ledger/export.py", 5, "path"),
            ("/home/dev/ledger/docs/SKILL.md", 5, "path"),
            ("src/ledger/rounding.py", 7, "path"),
            ("77120", 9, "identifier"),
            ("$0.02", 9, "number"),
        ] == [(p.text, p.start, p.kind) for p in parse_scenario(text, "c.toml").probes]

    def test_without_a_pin_the_system_prompt_still_gives_its_constraints(self) -> None:
        scenario = parse_scenario(import_transcript(CODING, probes="auto"), "c.toml")
        kinds = [probe.kind for probe in scenario.probes]
        assert (3, "constraint") == (kinds.count("constraint"), kinds[0])

    def test_a_probe_written_with_its_kind_reads_back(self, tmp_path: Path) -> None:
        listed = _file(
            tmp_path, "p.jsonl", '{"text": "policy R-7", "from": 14, "kind": "identifier"}\n'
        )
        scenario = load_scenario(str(_support(tmp_path, "--probes", str(listed))))
        assert (Probe("policy R-7", 14, "identifier"),) == scenario.probes

    def test_without_probes_the_file_plants_none(self) -> None:
        text = import_transcript(FIXTURE)
        assert ((), "[[probe]]" in text) == (parse_scenario(text, "s.toml").probes, False)

    def test_auto_writes_probe_tables_the_loader_reads(self, tmp_path: Path) -> None:
        scenario = load_scenario(str(_support(tmp_path, "--probes", "auto")))
        assert auto_probes(_pairs(FIXTURE)) == list(scenario.probes)

    def test_auto_imports_the_same_bytes_every_time(self, tmp_path: Path) -> None:
        assert import_transcript(FIXTURE, probes="auto") == import_transcript(
            FIXTURE, probes="auto"
        )

    def test_a_probes_file_is_written_as_given(self, tmp_path: Path) -> None:
        listed = _file(tmp_path, "p.jsonl", '{"text": "policy R-7", "from": 14}\n')
        scenario = load_scenario(str(_support(tmp_path, "--probes", str(listed))))
        assert (Probe("policy R-7", 14),) == scenario.probes

    def test_a_bad_probes_file_is_one_line_exit_2_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        listed = _file(
            tmp_path, "p.jsonl", '{"text": "GX-20418", "from": 3}\n{"text": "x", "from": 0}\n'
        )
        out = tmp_path / "support.toml"
        status = main(["import", str(FIXTURE), "--out", str(out), "--probes", str(listed)])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert f"{listed}:2: from must be an integer >= 1, got 0" in captured.err
        assert not out.exists()

    def test_the_probes_file_cannot_be_the_output(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        listed = _file(tmp_path, "p.toml", '[[probe]]\ntext = "GX-20418"\nfrom = 3\n')
        status = main(["import", str(FIXTURE), "--out", str(listed), "--probes", str(listed)])
        err = capsys.readouterr().err
        assert (2, True) == (status, f"{listed}: cannot write it: it is {listed}" in err)
        assert listed.read_text("utf-8").startswith("[[probe]]")


class TestBenchOnAnImport:
    """Import with ``--probes auto``, bench two policies at a small budget: the probes
    kept differ, and ``--losses`` names the event that lost each."""

    def test_retention_differs_and_losses_name_their_events(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        scenario = _support(tmp_path, "--probes", "auto", "--budget", "60", "--hot-n", "2")
        capsys.readouterr()
        report = tmp_path / "bench.json"
        argv = ["bench", str(scenario), "--policy", "tiered", "--policy", "clear-tool-results"]
        assert 0 == main([*argv, "--losses", "--json", str(report), "--jobs", "1"])
        printed = capsys.readouterr().out
        kept = {
            row["policy"]: row["metrics"]["probe_retention"]
            for row in json.loads(report.read_text("utf-8"))["results"]
        }
        assert kept["tiered"] < kept["clear-tool-results"] < 1.0
        losses = [line for line in printed.splitlines() if " missing at turn " in line]
        labels = {line.split(": ", 1)[0] for line in losses}
        assert {"support-chat, tiered", "support-chat, clear-tool-results"} == labels
        # Each loss names the event of the run after which its probe stopped showing.
        imported = load_scenario(str(scenario))
        session = Session(imported.policies)
        session.execute_all(imported.steps)
        run = session.run
        for line in losses:
            match = re.fullmatch(
                r"support-chat, tiered: \w+ '(.+)' missing at turn \d+, lost by event (\d+) "
                r"\((\w+)\)",
                line,
            )
            if match is None:
                assert line.startswith("support-chat, clear-tool-results: ")
                continue
            probe, at, event = match.group(1), int(match.group(2)), match.group(3)
            before, after = (fold(run.events[:n]).window for n in (at - 1, at))
            assert (event, True, False) == (
                type(run.events[at - 1]).__name__,
                visible(before, probe),
                visible(after, probe),
            )
