"""An import prices its scenario as the model its transcript names, when memtape has a price
for it (``[cost] model``)."""

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.scenarios.cost import Cost
from tests.transcripts import fixture, imported


class TestModel:
    def test_a_claude_code_session_is_priced_as_its_responses_model(self) -> None:
        scenario = imported(fixture("claude-code-usage.jsonl"))
        assert Cost("claude-sonnet-4-5-20250929") == scenario.cost

    def test_a_codex_rollout_is_priced_as_its_turn_context_model(self) -> None:
        assert Cost("gpt-5.1-codex") == imported(fixture("codex-rollout.jsonl")).cost

    def test_an_otel_trace_is_priced_as_its_calls_model(self) -> None:
        assert Cost("claude-sonnet-4-6") == imported(fixture("otel-trace.json")).cost

    def test_a_capture_is_priced_as_its_responses_model(self, tmp_path: Path) -> None:
        text = fixture("capture-session.jsonl").read_text("utf-8")
        path = tmp_path / "capture.jsonl"
        path.write_text(text.replace('"claude-test"', '"claude-sonnet-4-5"'), "utf-8")
        assert (Cost("claude-sonnet-4-5"), Cost()) == (
            imported(path).cost,
            imported(fixture("capture-session.jsonl")).cost,
        )

    def test_a_gemini_cli_session_is_priced_as_its_messages_model(self) -> None:
        """Each gemini message names its model; the import wrote no [cost] table."""
        assert (Cost("gemini-2.5-pro"), Cost("gemini-2.5-pro")) == (
            imported(fixture("gemini-cli-session.json")).cost,
            imported(fixture("gemini-cli-session.jsonl")).cost,
        )

    def test_a_transcript_naming_no_model_is_not_priced(self) -> None:
        assert Cost() == imported(fixture("openai-chat.json")).cost

    def test_a_model_without_a_price_is_not_written(self, tmp_path: Path) -> None:
        text = fixture("claude-code-usage.jsonl").read_text("utf-8")
        path = tmp_path / "session.jsonl"
        path.write_text(text.replace("claude-sonnet-4-5-20250929", "claude-next-9"), "utf-8")
        assert Cost() == imported(path).cost

    def test_the_import_says_a_model_without_a_price_is_not_priced(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        text = fixture("claude-code-usage.jsonl").read_text("utf-8")
        path = tmp_path / "session.jsonl"
        path.write_text(text.replace("claude-sonnet-4-5-20250929", "claude-next-9"), "utf-8")
        status = main(["import", str(path), "--out", str(tmp_path / "s.toml")])
        said = [line for line in capsys.readouterr().out.splitlines() if "claude-next-9" in line]
        assert (
            0,
            [
                "cost: memtape ships no price for 'claude-next-9', so the scenario is not "
                "priced; bench --prices FILE.toml --set cost.model=claude-next-9 prices it "
                "(FILE.toml holding a row for the model)"
            ],
        ) == (status, said)
