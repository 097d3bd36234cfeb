"""The README's examples run as written."""

import re
from pathlib import Path

import pytest

import memtape
from memtape.cli import main

README = Path(__file__).parent.parent / "README.md"


class TestReadme:
    def test_library_example_runs(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The Python example executes and leaves the run file it promises."""
        blocks = re.findall(r"```python\n(.*?)```", README.read_text("utf-8"), re.S)
        assert blocks, "the README has a Python example"
        monkeypatch.chdir(tmp_path)
        namespace: dict[str, object] = {}
        exec(blocks[0], namespace)
        assert (tmp_path / "dana.jsonl").is_file()
        assert isinstance(namespace["session"], memtape.Session)

    def test_command_examples_are_real_commands(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Every `memtape ...` line of the CLI section runs with exit status 0."""
        text = README.read_text("utf-8")
        section = text.split("## Using the command line", 1)[1].split("```sh", 1)[1]
        lines = section.split("```", 1)[0].strip().splitlines()
        monkeypatch.chdir(tmp_path)
        commands = [line.split("#", 1)[0].split()[1:] for line in lines]
        assert len(commands) >= 5
        for argv in commands:
            assert main(argv) == 0, argv
