"""The README's examples run as written."""

import re
from pathlib import Path

import pytest

import memtape
from memtape.cli import _parser, main
from memtape.policies import summarizers
from memtape.policies.tool_clearing import ClearToolResults

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

    def test_compaction_policies_examples_run(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The section's Python example builds its policy; its memtape lines exit 0."""
        section = README.read_text("utf-8").split("## Compaction policies", 1)[1]
        section = section.split("\n## ", 1)[0]
        (python,) = re.findall(r"```python\n(.*?)```", section, re.S)
        monkeypatch.setattr(summarizers, "SUMMARIZERS", dict(summarizers.SUMMARIZERS))
        monkeypatch.chdir(tmp_path)
        namespace: dict[str, object] = {}
        exec(python, namespace)
        lines = [
            line.split()[1:]
            for block in re.findall(r"```sh\n(.*?)```", section, re.S)
            for line in block.splitlines()
            if line.startswith("memtape ")
        ]

        assert isinstance(namespace["policy"], memtape.RollingSummary)
        assert "llm" in summarizers.SUMMARIZERS
        assert 2 == len(lines)
        assert [0, 0] == [main(argv) for argv in lines]

    def test_comparing_policies_commands_are_real(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Every bench line parses as written; the generators run (the benches take seconds)."""
        section = README.read_text("utf-8").split("## Comparing policies", 1)[1]
        section = section.split("\n## ", 1)[0]
        lines = [
            line.split()[1:]
            for block in re.findall(r"```sh\n(.*?)```", section, re.S)
            for line in block.splitlines()
            if line.startswith("memtape ")
        ]
        monkeypatch.chdir(tmp_path)
        benches = [argv for argv in lines if argv[0] == "bench"]
        assert 3 == len(benches)
        for argv in benches:
            assert "bench" == _parser().parse_args(argv).handler.__name__.strip("_")
        generators = [argv for argv in lines if argv[0] == "generate"]
        assert [0, 0] == [main(argv) for argv in generators]
        assert {"support.toml", "store.toml"} == {path.name for path in tmp_path.iterdir()}

    def test_the_clear_tool_results_row_names_the_default_placeholder(self) -> None:
        """The policies table gives the placeholder the code writes by default."""
        default = ClearToolResults.from_params({"budget": 50}, "here").params()["placeholder"]
        row = next(
            line
            for line in README.read_text("utf-8").splitlines()
            if line.startswith("| `clear-tool-results` |")
        )
        assert f'`placeholder` (`"{default}"`)' in row
