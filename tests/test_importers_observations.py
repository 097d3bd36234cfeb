"""memtape.lab.importers.observations: a user message after an action, read as its result."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from tests.transcripts import fixture, turns_of, unpaired, write_lines

TEXT_MODE = [
    {"role": "system", "content": "Answer with one shell command in a code block."},
    {"role": "user", "content": "How much disk is free?"},
    {"role": "assistant", "content": "```bash\ndf -h /\n```"},
    {"role": "user", "content": "/dev/sda1  40G  31G  9.0G  78% /"},
    {"role": "assistant", "content": "9.0G is free on /."},
]


class TestOpenAIChat:
    def test_auto_reads_a_chat_as_written(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "chat.jsonl", *TEXT_MODE)
        roles = [t.role for t in read_transcript(path, observations="auto").turns]
        assert ["system", "user", "assistant", "user", "assistant"] == roles

    def test_user_after_action_pairs_the_output_with_its_command(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "chat.jsonl", *TEXT_MODE)
        turns = turns_of(path, observations="user-after-action")
        assert [
            ("user", (), (), None),
            ("assistant", ("action.3",), (), None),
            ("tool", (), ("action.3",), None),
            ("assistant", (), (), None),
        ] == [(t.role, t.calls, t.answers, t.salient) for t in turns[1:]]
        assert [] == unpaired(turns)

    def test_the_ledger_counts_the_pair(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "chat.jsonl", *TEXT_MODE)
        ledger = read_transcript(path, observations="user-after-action").ledger
        assert ledger is not None
        assert (1, 1, 1, 1) == (
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )


class TestModes:
    def test_a_format_of_other_shapes_refuses_user_after_action(self) -> None:
        with pytest.raises(BadInput) as caught:
            read_transcript(fixture("anthropic.json"), observations="user-after-action")
        assert str(caught.value).endswith(
            "--observations user-after-action is for openai-chat, swe-agent and mini-swe-agent "
            "files; this is anthropic"
        )

    def test_an_unknown_mode_is_refused(self) -> None:
        with pytest.raises(BadInput) as caught:
            read_transcript(fixture("support-chat.jsonl"), observations="pairs")
        expected = "--observations 'pairs': write one of auto, as-written, user-after-action"
        assert expected == str(caught.value)

    def test_the_command_line_takes_it(self, tmp_path: Path) -> None:
        out = tmp_path / "swe.toml"
        status = main(
            [
                "import",
                str(fixture("swe-agent-text.traj")),
                "--observations",
                "as-written",
                "--out",
                str(out),
                "-q",
            ]
        )
        assert (0, False) == (status, "answers" in out.read_text("utf-8"))
