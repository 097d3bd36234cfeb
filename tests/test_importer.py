"""memtape.lab.importer and ``memtape import``: OpenAI chat transcripts as scenarios."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.lab.importer import import_chat, read_chat, salient_roles
from memtape.scenarios import parse_scenario

FIXTURE = Path(__file__).parent / "fixtures" / "support-chat.jsonl"


def _turns(text: str) -> list[AddTurn]:
    steps = parse_scenario(text, "imported.toml").steps
    assert all(isinstance(step, AddTurn) for step in steps)
    return [step for step in steps if isinstance(step, AddTurn)]


def _chat(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


class TestFixture:
    def test_every_message_becomes_a_turn_in_order(self) -> None:
        messages = [json.loads(line) for line in FIXTURE.read_text("utf-8").splitlines()]
        turns = _turns(import_chat(FIXTURE))
        assert [m["role"] for m in messages] == [turn.role for turn in turns]
        assert 19 == len(turns)

    def test_string_content_is_kept_verbatim(self) -> None:
        turns = _turns(import_chat(FIXTURE))
        assert turns[1].text.startswith("Hi, this is Priya Raman. My order GX-20418")
        assert "$134.95 ($129.00 item + $5.95 shipping)" in turns[15].text

    def test_text_parts_are_joined_by_lines(self) -> None:
        turn = _turns(import_chat(FIXTURE))[8]
        assert 2 == len(turn.text.splitlines())
        assert turn.text.endswith("which may miss your weekend.")

    def test_a_tool_calling_message_reads_as_its_calls(self) -> None:
        turn = _turns(import_chat(FIXTURE))[2]
        assert 'call lookup_order({"order_id": "GX-20418"})' == turn.text

    def test_tool_results_are_salient_by_default(self) -> None:
        turns = _turns(import_chat(FIXTURE))
        # An unset flag means: salient for tool turns only.
        assert {None} == {turn.salient for turn in turns}

    def test_all_makes_every_turn_salient(self) -> None:
        turns = _turns(import_chat(FIXTURE, "all"))
        assert {True} == {turn.salient for turn in turns if turn.role != "tool"}

    def test_none_makes_tool_results_chatter(self) -> None:
        turns = _turns(import_chat(FIXTURE, "none"))
        assert {False} == {turn.salient for turn in turns if turn.role == "tool"}
        assert {None} == {turn.salient for turn in turns if turn.role != "tool"}

    def test_a_role_list_picks_the_salient_roles(self) -> None:
        turns = _turns(import_chat(FIXTURE, "system,user"))
        salient = {turn.role for turn in turns if turn.salient is True}
        chatter = {turn.role for turn in turns if turn.salient is False}
        assert ({"system", "user"}, {"tool"}) == (salient, chatter)

    def test_the_header_is_the_default_one(self) -> None:
        scenario = parse_scenario(import_chat(FIXTURE, budget=300, hot_n=4), "x.toml")
        compaction = scenario.policies.params()["compaction"]
        assert (300, 4, "support-chat") == (
            compaction["budget"],
            compaction["hot_n"],
            scenario.name,
        )


class TestBadLines:
    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("{not json", "not a JSON message"),
            ("[1, 2]", "a message is an object with role and content"),
            ('{"content": "hi"}', "role must be one of system, developer, user, assistant, tool"),
            ('{"role": "the user", "content": "hi"}', "got 'the user'"),
            ('{"role": ["user"], "content": "hi"}', "got ['user']"),
            ('{"role": "user"}', "a message needs content"),
            ('{"role": "user", "content": 5}', "content must be a string"),
            ('{"role": "user", "content": null}', "content must be a string"),
            ('{"role": "user", "content": [{"type": "image_url"}]}', "only text parts import"),
            ('{"role": "user", "content": "\\ud800"}', "not a JSON message"),
            ('{"role": "assistant", "content": null, "tool_calls": [{}]}', "a tool call needs"),
        ],
    )
    def test_a_malformed_line_names_file_and_line(
        self, tmp_path: Path, line: str, message: str
    ) -> None:
        path = _chat(tmp_path, '{"role": "user", "content": "hello"}', line)
        with pytest.raises(BadInput) as caught:
            read_chat(path)
        assert str(caught.value).startswith(f"{path}:2: ")
        assert message in str(caught.value)

    def test_invalid_utf8_names_its_line(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_bytes(
            b'{"role": "user", "content": "ok"}\n{"role": "user", "content": "\xff"}\n'
        )
        with pytest.raises(BadInput, match=rf"^{path}:2: not a JSON message"):
            read_chat(path)

    def test_an_empty_file_has_no_messages(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="no messages"):
            read_chat(_chat(tmp_path, ""))

    @pytest.mark.parametrize("rule", ["", "tool,", "the user", "tools", "developer"])
    def test_a_malformed_salient_rule_is_refused(self, rule: str) -> None:
        with pytest.raises(BadInput, match="--salient"):
            salient_roles(rule)


class TestSalientRoles:
    def test_a_role_no_message_has_is_refused_naming_the_file_s_roles(self, tmp_path: Path) -> None:
        """A rule naming a role the file lacks would make no turn salient, silently: it is
        refused instead."""
        path = _chat(tmp_path, '{"role": "user", "content": "hello"}')
        with pytest.raises(BadInput) as caught:
            import_chat(path, "system")
        expected = (
            f"{path}: --salient 'system': no message has the role 'system' (the file's roles: user)"
        )
        assert expected == str(caught.value)

    def test_every_missing_role_is_named(self, tmp_path: Path) -> None:
        path = _chat(tmp_path, '{"role": "user", "content": "hello"}')
        with pytest.raises(BadInput, match="no message has the roles 'system', 'tool' "):
            import_chat(path, "tool,system,user")

    def test_a_typo_is_not_a_role(self) -> None:
        """A typo ("tools") is refused before the file is read, naming the roles there are."""
        with pytest.raises(BadInput) as caught:
            import_chat(FIXTURE, "tools")
        expected = (
            "--salient 'tools': write tool, all, none, or roles separated by commas "
            "(of system, user, assistant, tool)"
        )
        assert expected == str(caught.value)

    def test_openai_roles_map_onto_the_closed_set(self, tmp_path: Path) -> None:
        """A developer message is a system prompt; a function message a tool result."""
        path = _chat(
            tmp_path,
            '{"role": "developer", "content": "be brief"}',
            '{"role": "function", "content": "42"}',
        )
        assert ["system", "tool"] == [turn.role for turn in _turns(import_chat(path))]

    def test_the_default_holds_for_a_file_without_tool_results(self, tmp_path: Path) -> None:
        """No rule given: tool results are salient if there are any, and nothing is refused."""
        path = _chat(tmp_path, '{"role": "user", "content": "hello"}')
        assert [None] == [turn.salient for turn in _turns(import_chat(path))]

    def test_the_system_prompt_is_chatter_unless_named(self) -> None:
        """What the README says: the system prompt is salient only when the rule names it."""
        default = _turns(import_chat(FIXTURE))
        named = _turns(import_chat(FIXTURE, "tool,system"))
        assert (False, True) == (
            any(t.salient for t in default if t.role == "system"),
            all(t.salient for t in named if t.role == "system"),
        )


class TestCli:
    def test_a_salient_role_no_message_has_is_exit_2_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "chat.toml"
        chat = _chat(tmp_path, '{"role": "user", "content": "hello"}')
        status = main(["import", str(chat), "--salient", "tool", "--out", str(out)])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert "--salient 'tool': no message has the role 'tool'" in captured.err
        assert not out.exists()

    def test_import_writes_a_scenario_that_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "chat.toml"
        assert 0 == main(["import", str(FIXTURE), "--out", str(out)])
        run = tmp_path / "chat.jsonl"
        assert 0 == main(["run", str(out), "--out", str(run)])
        assert "recorded 19 events from 19 steps" in capsys.readouterr().out

    def test_a_malformed_line_is_one_line_on_stderr_and_nothing_is_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = _chat(tmp_path, '{"role": "user", "content": "hello"}', "{oops")
        out = tmp_path / "chat.toml"
        status = main(["import", str(path), "--out", str(out)])
        captured = capsys.readouterr()
        assert (2, "") == (status, captured.out)
        assert 1 == len(captured.err.splitlines())
        assert captured.err.startswith(f"memtape: error: {path}:2: not a JSON message: ")
        assert not out.exists()

    @pytest.mark.parametrize(
        ("option", "message"),
        [
            (["--budget", "0"], "--budget must be an integer in 1.."),
            (["--hot-n", "-1"], "--hot-n must be an integer in 0.."),
        ],
    )
    def test_a_budget_or_hot_n_the_file_could_not_load_with_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
    ) -> None:
        out = tmp_path / "chat.toml"
        status = main(["import", str(FIXTURE), "--out", str(out), *option])
        captured = capsys.readouterr()
        assert (2, "") == (status, captured.out)
        assert captured.err.startswith(f"memtape: error: {message}")
        assert not out.exists()
