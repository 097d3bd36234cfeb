"""memtape.lab.importers and ``memtape import``: any transcript format into a scenario file."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.importers import (
    FORMATS,
    import_transcript,
    read_transcript,
    salient_roles,
    transcript_scenario,
)
from memtape.lab.importers.scenario import CallsLeftWaiting, NothingSalient
from memtape.scenarios import parse_scenario
from tests.test_importers_detect import FIXTURES
from tests.transcripts import fixture, imported, turns_of, write_lines

SUPPORT = fixture("support-chat.jsonl")


class TestSalience:
    def test_tool_results_are_salient_by_default(self) -> None:
        # An unset flag means: salient for tool turns only.
        assert {None} == {turn.salient for turn in turns_of(SUPPORT)}

    def test_all_makes_every_turn_salient(self) -> None:
        turns = turns_of(SUPPORT, salient="all")
        assert {True} == {turn.salient for turn in turns if turn.role != "tool"}

    def test_none_makes_tool_results_chatter(self) -> None:
        turns = turns_of(SUPPORT, salient="none")
        assert {False} == {turn.salient for turn in turns if turn.role == "tool"}
        assert {None} == {turn.salient for turn in turns if turn.role != "tool"}

    def test_a_role_list_picks_the_salient_roles(self) -> None:
        turns = turns_of(SUPPORT, salient="system,user")
        salient = {turn.role for turn in turns if turn.salient is True}
        chatter = {turn.role for turn in turns if turn.salient is False}
        assert ({"system", "user"}, {"tool"}) == (salient, chatter)

    def test_a_role_no_message_has_is_refused_naming_the_file_s_roles(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "chat.jsonl", {"role": "user", "content": "hello"})
        with pytest.raises(BadInput) as caught:
            import_transcript(path, salient="system")
        expected = (
            f"{path}: --salient 'system': no message has the role 'system' (the file's roles: user)"
        )
        assert expected == str(caught.value)

    def test_a_typo_is_not_a_role(self) -> None:
        with pytest.raises(BadInput) as caught:
            import_transcript(SUPPORT, salient="tools")
        expected = (
            "--salient 'tools': write tool, all, none, or roles separated by commas "
            "(of system, user, assistant, tool)"
        )
        assert expected == str(caught.value)

    @pytest.mark.parametrize("rule", ["", "tool,", "the user", "tools", "developer"])
    def test_a_malformed_rule_is_refused(self, rule: str) -> None:
        with pytest.raises(BadInput, match="--salient"):
            salient_roles(rule)

    def test_the_system_prompt_is_chatter_unless_named(self) -> None:
        default = turns_of(SUPPORT)
        named = turns_of(SUPPORT, salient="tool,system")
        assert (False, True) == (
            any(t.salient for t in default if t.role == "system"),
            all(t.salient for t in named if t.role == "system"),
        )


class TestPins:
    def test_nothing_is_pinned_by_default(self) -> None:
        assert {False} == {turn.pin for turn in turns_of(SUPPORT)}

    def test_system_pins_every_system_turn(self) -> None:
        turns = turns_of(SUPPORT, pin="system")
        assert [turn.role == "system" for turn in turns] == [turn.pin for turn in turns]

    def test_first_pins_the_first_turn(self) -> None:
        turns = turns_of(fixture("claude-code-session.jsonl"), pin="first")
        assert [True] + [False] * (len(turns) - 1) == [turn.pin for turn in turns]

    def test_system_without_a_system_turn_is_refused(self) -> None:
        path = fixture("claude-code-session.jsonl")
        with pytest.raises(BadInput, match=r"--pin system: no message has the role 'system'"):
            import_transcript(path, pin="system")

    def test_an_unknown_pin_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^--pin 'last': write one of none, system, first$"):
            import_transcript(SUPPORT, pin="last")


class TestHeader:
    def test_budget_hot_n_and_tokenizer_head_the_file(self) -> None:
        scenario = imported(SUPPORT, budget=300, hot_n=4, tokenizer="cl100k_base")
        compaction = scenario.policies.params()["compaction"]
        assert ("tiered", 300, 4, "cl100k_base", "support-chat") == (
            compaction["policy"],
            compaction["budget"],
            compaction["hot_n"],
            compaction["tokenizer"],
            scenario.name,
        )

    def test_an_unknown_tokenizer_is_refused_before_the_file_is_read(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match=r"^--tokenizer: unknown tokenizer 'gpt2'"):
            import_transcript(tmp_path / "never-read.jsonl", tokenizer="gpt2")

    def test_the_comment_counts_what_imported(self) -> None:
        text = import_transcript(fixture("anthropic.json"))
        assert text.startswith(
            "# Imported from anthropic.json (anthropic): 13 turns, 4 tool calls, 4 tool results.\n"
            "# Salient: tool; pinned: none.\n"
        )

    def test_the_same_file_gives_the_same_bytes(self) -> None:
        path = fixture("claude-code-session.jsonl")
        assert import_transcript(path, sidechains=True) == import_transcript(path, sidechains=True)

    def test_probes_given_with_the_turns_are_planted(self) -> None:
        """Turns come back as data first, so probes can be planted before the file is written."""
        transcript = read_transcript(SUPPORT)
        planted = [{"text": "RF-55902", "from": 16}]
        scenario = parse_scenario(
            transcript_scenario(transcript, SUPPORT, probes=planted), "s.toml"
        )
        assert [("RF-55902", 16)] == [(p.text, p.start) for p in scenario.probes]


class TestOptions:
    def test_an_unknown_format_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^--format 'yaml': write one of auto, openai-chat"):
            import_transcript(SUPPORT, format="yaml")

    def test_sidechains_is_for_claude_code_sessions(self) -> None:
        with pytest.raises(BadInput, match="--sidechains is for claude-code sessions, and this"):
            import_transcript(SUPPORT, sidechains=True)
        with pytest.raises(BadInput, match="--sidechains is for claude-code sessions, not"):
            import_transcript(SUPPORT, format="anthropic", sidechains=True)


class TestCli:
    @pytest.mark.parametrize("name", list(FIXTURES))
    def test_each_fixture_imports_to_a_scenario_that_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
    ) -> None:
        out = tmp_path / "s.toml"
        assert 0 == main(["import", str(fixture(name)), "--out", str(out)])
        assert 0 == main(["run", str(out), "--out", str(tmp_path / "run.jsonl")])
        assert f"wrote {out}\n" == capsys.readouterr().out.splitlines(keepends=True)[0]

    def test_format_forces_a_format(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "s.toml"
        status = main(["import", str(SUPPORT), "--format", "anthropic", "--out", str(out)])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert f"{SUPPORT}:1: role must be user or assistant" in captured.err
        assert not out.exists()

    def test_a_salient_role_no_message_has_is_exit_2_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "chat.toml"
        chat = write_lines(tmp_path / "chat.jsonl", {"role": "user", "content": "hello"})
        status = main(["import", str(chat), "--salient", "tool", "--out", str(out)])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert "--salient 'tool': no message has the role 'tool'" in captured.err
        assert not out.exists()

    def test_a_malformed_line_is_one_line_on_stderr_and_nothing_is_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_text('{"role": "user", "content": "hello"}\n{oops\n', "utf-8")
        out = tmp_path / "chat.toml"
        status = main(["import", str(path), "--out", str(out)])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert captured.err.startswith(f"memtape: error: {path}:2: not a JSON object: ")
        assert not out.exists()

    @pytest.mark.parametrize(
        ("option", "message"),
        [
            (["--budget", "0"], "--budget must be an integer in 1.."),
            (["--hot-n", "-1"], "--hot-n must be an integer in 0.."),
            (["--tokenizer", "bytes"], "--tokenizer: unknown tokenizer 'bytes'"),
        ],
    )
    def test_an_option_the_file_could_not_load_with_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
    ) -> None:
        out = tmp_path / "chat.toml"
        status = main(["import", str(SUPPORT), "--out", str(out), *option])
        captured = capsys.readouterr()
        assert (2, "") == (status, captured.out)
        assert captured.err.startswith(f"memtape: error: {message}")
        assert not out.exists()

    def test_the_help_names_every_format(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit):
            main(["import", "--help"])
        help_text = capsys.readouterr().out
        assert [] == [name for name in FORMATS if name not in help_text]
        assert "Claude" in help_text


class TestNothingSalient:
    def test_a_plain_chat_warns_that_every_summary_will_be_empty(self, tmp_path: Path) -> None:
        chat = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi"},
        )

        with pytest.warns(NothingSalient, match="no turn is salient under --salient tool"):
            imported(chat)

    def test_a_chat_with_a_tool_turn_does_not(self, recwarn: pytest.WarningsRecorder) -> None:
        imported(fixture("support-chat.jsonl"))

        assert [] == [w for w in recwarn if issubclass(w.category, NothingSalient)]


def _went_on(tmp_path: Path, *after: dict[str, object]) -> Path:
    """A chat whose second turn calls ``c1``; ``after`` follows it."""
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return write_lines(
        tmp_path / "chat.jsonl",
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        *after,
    )


class TestCallsLeftWaiting:
    def test_a_call_the_conversation_went_on_past_is_a_warning_naming_it(
        self, tmp_path: Path
    ) -> None:
        path = _went_on(
            tmp_path,
            {"role": "user", "content": "never mind, what is 2 + 2?"},
            {"role": "assistant", "content": "4"},
        )

        with pytest.warns(CallsLeftWaiting) as caught:
            imported(path, salient="all")

        expected = (
            f"{path}: 1 tool call never got its result and the conversation went on past "
            f"it: call 'c1' of turn 2 ({path}:2); every turn after it is one unit no policy "
            "can compact (memtape check on the run names each)"
        )
        assert [expected] == [str(w.message) for w in caught]

    def test_several_are_counted_and_the_first_named(self, tmp_path: Path) -> None:
        call = {"id": "c2", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}
        path = _went_on(
            tmp_path,
            {"role": "user", "content": "stop; where are we?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "user", "content": "stop again"},
        )

        with pytest.warns(CallsLeftWaiting) as caught:
            imported(path, salient="all")

        assert str(caught[0].message).startswith(
            f"{path}: 2 tool calls never got their results and the conversation went on past "
            f"them, the first call 'c1' of turn 2 ({path}:2); "
        )

    def test_a_call_the_session_stopped_on_is_no_warning(
        self, tmp_path: Path, recwarn: pytest.WarningsRecorder
    ) -> None:
        imported(_went_on(tmp_path), salient="all")

        assert [] == [w for w in recwarn if issubclass(w.category, CallsLeftWaiting)]

    def test_every_fixture_answers_what_it_went_on_past(
        self, recwarn: pytest.WarningsRecorder
    ) -> None:
        for name in ("support-chat.jsonl", "claude-code-parallel.jsonl", "codex-rollout.jsonl"):
            imported(fixture(name))

        assert [] == [w for w in recwarn if issubclass(w.category, CallsLeftWaiting)]

    def test_the_command_prints_it_in_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = _went_on(tmp_path, {"role": "user", "content": "never mind"})

        status = main(
            ["import", str(path), "--out", str(tmp_path / "s.toml"), "-q", "--salient", "all"]
        )

        err = capsys.readouterr().err.splitlines()
        assert (0, 1) == (status, len(err))
        assert err[0].startswith(f"memtape: warning: {path}: 1 tool call never got its result")


class TestLedgerOnTheCommandLine:
    def test_import_prints_the_ledger_after_writing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "s.toml"
        status = main(["import", str(fixture("claude-code-rewound.jsonl")), "--out", str(out)])
        assert (
            0,
            [
                f"wrote {out}",
                "read 8 entries, wrote 5 turns",
                "tool calls: 2 in, 1 out, 1 in entries left out",
                "tool results: 2 in, 1 out, 1 in entries left out",
                "left out: 3 rewound branch entries (holding 1 call and 1 result)",
                "budget: 22,000 tokens, the largest prompt the provider's usage recorded (22,426) "
                "rounded down; --budget sets another",
                "tokens: o200k_base counts 34 where the provider's usage counts 424, "
                "over 2 of 5 turns: ratio 0.08",
            ],
        ) == (status, capsys.readouterr().out.splitlines())
        imported = parse_scenario(out.read_text("utf-8"), str(out)).imported
        assert imported is not None
        assert 2 == imported["calls_in"]

    def test_its_lines_fit_the_terminal_s_width(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv("COLUMNS", "60")
        out = tmp_path / "s.toml"
        assert 0 == main(["import", str(fixture("claude-code-rewound.jsonl")), "--out", str(out)])
        _wrote, *lines = capsys.readouterr().out.splitlines()
        assert ([], "    usage recorded (22,426) rounded down; --budget sets") == (
            [line for line in lines if len(line) > 60],
            lines[6],
        )

    def test_a_half_written_last_line_is_a_warning_naming_it(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = fixture("claude-code-half-written.jsonl")
        status = main(["import", str(path), "--out", str(tmp_path / "s.toml"), "--salient", "all"])
        assert (
            0,
            f"memtape: warning: {path}:4: an unfinished last line (no newline, not JSON): "
            "skipped\n",
        ) == (
            status,
            capsys.readouterr().err,
        )

    def test_skip_bad_lines_names_each_line_it_skipped(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_text(
            '{"role": "user", "content": "hello"}\n{oops\n{"role": "user", "content": "again"}\n'
        )
        out = tmp_path / "chat.toml"
        status = main(
            ["import", str(path), "--out", str(out), "--skip-bad-lines", "--salient", "all"]
        )
        captured = capsys.readouterr()
        assert 0 == status
        assert captured.err.startswith(f"memtape: warning: {path}:2: not a JSON object: ")
        assert any(
            line.startswith(f"skipped {path}:2: not a JSON object")
            for line in captured.out.splitlines()
        )
