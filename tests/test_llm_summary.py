"""policies.text.llm_summary: summarizer = "llm" for rolling-summary, against a real server."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, ModelCall, TurnAdded
from memtape.llm.asking import prompt_hash
from memtape.llm.config import ModelConfig
from memtape.policies.session import Policies, Session
from memtape.policies.text.llm_summary import (
    DEFAULT_PROMPT,
    NO_SUMMARY,
    LlmSummarizer,
    render_prompt,
    render_turns,
)
from memtape.policies.text.summarizers import cap
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.scenarios import load_scenario
from tests.llm_runs import MODEL, scenario
from tests.llm_server import ChatServer, answer_for

CALL = TurnAdded(3, "assistant", "Let me look.", 3, False, ("lookup_1",))
RESULT = TurnAdded(4, "tool", "A-1001: $180.00", 2, True, (), ("lookup_1",))


def _compactions(session: Session) -> list[CompactionTriggered]:
    return [e for e in session.run.events if isinstance(e, CompactionTriggered)]


def _desk(tmp_path: Path, url: str, **tables: str) -> Session:
    loaded = load_scenario(str(scenario(tmp_path / "desk.toml", url, **tables)))
    session = Session(loaded.policies)
    session.execute_all(loaded.steps)
    return session


class TestPrompt:
    def test_turns_are_listed_with_number_role_calls_and_results(self) -> None:
        assert (
            "[3] assistant (calls lookup_1): Let me look.\n"
            "[4] tool (result of lookup_1): A-1001: $180.00"
        ) == render_turns([CALL, RESULT])

    def test_the_placeholders_take_the_summary_the_turns_and_the_limit(self) -> None:
        text = render_prompt("S={summary} T={turns} L={limit}", "so far", [RESULT], 12)

        assert "S=so far T=[4] tool (result of lookup_1): A-1001: $180.00 L=12" == text

    def test_before_the_first_summary_it_says_there_is_none(self) -> None:
        assert NO_SUMMARY == render_prompt("{summary}", "", [], 1)

    def test_a_placeholder_inside_a_turn_is_left_as_it_is(self) -> None:
        turn = TurnAdded(1, "user", "write {limit} and {summary}", 4, False)

        assert "[1] user: write {limit} and {summary} / 5" == render_prompt(
            "{turns} / {limit}", "", [turn], 5
        )

    def test_other_braces_are_left_as_they_are(self) -> None:
        assert 'answer {"summary": ...} in 9' == render_prompt(
            'answer {"summary": ...} in {limit}', "", [], 9
        )

    def test_the_default_prompt_asks_for_the_limit_and_lists_everything(self) -> None:
        text = render_prompt(DEFAULT_PROMPT, "the charge", [CALL, RESULT], 25)

        assert "at most 25 tokens" in text
        assert "Summary so far:\nthe charge\n" in text
        assert "[4] tool (result of lookup_1): A-1001: $180.00" in text


class TestPromptParams:
    def test_a_prompt_in_the_table_is_used_and_recorded(self, chat_server: ChatServer) -> None:
        tables = {
            "compaction": {
                "policy": "rolling-summary",
                "budget": 30,
                "summarizer": "llm",
                "prompt": "Fold {turns}",
            },
            "llm": {"model": "m", "base_url": chat_server.url},
        }
        policies = Policies.from_params(tables)

        assert isinstance(policies.compaction, RollingSummary)
        assert isinstance(policies.compaction.summarizer, LlmSummarizer)
        assert "Fold {turns}" == policies.compaction.summarizer.prompt
        assert "Fold {turns}" == policies.params()["compaction"]["prompt"]

    def test_a_prompt_file_is_read_and_its_text_recorded(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "fold.txt").write_text("Fold these:\n{turns}\n", "utf-8")
        monkeypatch.chdir(tmp_path)
        policies = Policies.from_params(
            {
                "compaction": {
                    "policy": "rolling-summary",
                    "budget": 30,
                    "summarizer": "llm",
                    "prompt_file": "fold.txt",
                },
                "llm": {"model": "m"},
            }
        )

        assert "Fold these:\n{turns}\n" == policies.params()["compaction"]["prompt"]
        assert "prompt_file" not in policies.params()["compaction"]

    def test_a_missing_prompt_file_is_one_line(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match=r"missing\.txt"):
            Policies.from_params(
                {
                    "compaction": {
                        "policy": "rolling-summary",
                        "budget": 30,
                        "summarizer": "llm",
                        "prompt_file": str(tmp_path / "missing.txt"),
                    },
                    "llm": {"model": "m"},
                }
            )

    def test_a_prompt_without_the_turns_is_refused_in_a_scenario(self) -> None:
        with pytest.raises(BadInput, match=r"^s: \[compaction\]: prompt must say \{turns\}"):
            Policies.from_params(
                {
                    "compaction": {
                        "policy": "rolling-summary",
                        "budget": 30,
                        "summarizer": "llm",
                        "prompt": "Summarize.",
                    },
                    "llm": {"model": "m"},
                },
                "s",
            )

    def test_prompt_and_prompt_file_together_are_refused(self) -> None:
        with pytest.raises(BadInput, match="keep one"):
            Policies.from_params(
                {
                    "compaction": {
                        "policy": "rolling-summary",
                        "budget": 30,
                        "summarizer": "llm",
                        "prompt": "{turns}",
                        "prompt_file": "p.txt",
                    },
                    "llm": {"model": "m"},
                }
            )

    def test_a_prompt_for_another_summarizer_is_an_unknown_parameter(self) -> None:
        with pytest.raises(BadInput, match=r"unknown parameter prompt"):
            Policies.from_params(
                {"compaction": {"policy": "rolling-summary", "budget": 30, "prompt": "{turns}"}}
            )


@pytest.mark.usefixtures("llm_env")
class TestSummarizing:
    def test_the_summarizer_asks_the_model_and_returns_its_call(
        self, chat_server: ChatServer
    ) -> None:
        summarizer = LlmSummarizer(ModelConfig(MODEL, chat_server.url, max_retries=0))

        call = summarizer("earlier $5", [RESULT], 9)

        prompt = render_prompt(DEFAULT_PROMPT, "earlier $5", [RESULT], 9)
        assert answer_for(MODEL, prompt) == call.output
        assert (MODEL, prompt_hash(prompt), False) == (call.model, call.prompt, call.cached)
        assert (len(prompt.split()), len(call.output.split())) == (
            call.prompt_tokens,
            call.completion_tokens,
        )
        assert call.seconds > 0
        assert [{"role": "user", "content": prompt}] == chat_server.bodies[0]["messages"]

    def test_the_request_carries_the_model_temperature_and_seed(
        self, chat_server: ChatServer
    ) -> None:
        LlmSummarizer(ModelConfig(MODEL, chat_server.url, 0.3, 11, max_retries=0))("", [], 5)

        body = chat_server.bodies[0]
        assert (MODEL, 0.3, 11) == (body["model"], body["temperature"], body["seed"])

    def test_each_compaction_records_the_call_that_wrote_its_summary(
        self, chat_server: ChatServer, tmp_path: Path
    ) -> None:
        session = _desk(tmp_path, chat_server.url)
        compactions = _compactions(session)

        assert 3 == len(compactions) == chat_server.requests
        for compaction, body in zip(compactions, chat_server.bodies, strict=True):
            (call,) = compaction.asked
            prompt = body["messages"][0]["content"]
            assert answer_for(MODEL, prompt) == call.output
            assert prompt_hash(prompt) == call.prompt

    def test_the_summary_is_the_models_answer_within_the_limit(
        self, chat_server: ChatServer, tmp_path: Path
    ) -> None:
        """The policy still enforces summary_tokens on what the model wrote."""
        session = _desk(tmp_path, chat_server.url)
        compaction = _compactions(session)[-1]
        (call,) = compaction.asked

        policy = session.policies.compaction
        assert isinstance(policy, RollingSummary)
        limited = cap(call.output, 8, policy.tokenizer.count)
        assert limited == compaction.warm[-1].text
        assert policy.tokenizer.count(compaction.warm[-1].text) <= 8

    def test_a_long_answer_is_cut_to_the_limit(self, chat_server: ChatServer) -> None:
        policy = RollingSummary(
            10,
            keep=1,
            summary_tokens=2,
            summarizer=LlmSummarizer(ModelConfig(MODEL, chat_server.url, max_retries=0)),
        )
        session = Session(Policies(policy))
        session.execute(AddTurn("tool", "$1 $2 $3 $4 $5 $6", True))
        session.execute(AddTurn("user", "and $7 $8 $9 more"))

        (compaction,) = _compactions(session)
        assert f"[{MODEL}] $1 $2 $3 $4 $5 $6" == compaction.asked[0].output
        assert "$5 $6" == compaction.warm[-1].text

    def test_the_prompt_passes_the_summary_so_far(
        self, chat_server: ChatServer, tmp_path: Path
    ) -> None:
        session = _desk(tmp_path, chat_server.url)
        first, second, _ = _compactions(session)

        assert (
            f"Summary so far:\n{first.warm[-1].text}\n"
            in (chat_server.bodies[1]["messages"][0]["content"])
        )
        assert second.asked[0].output.startswith(f"[{MODEL}]")

    def test_a_model_call_is_a_model_call_record(self) -> None:
        assert {
            "output",
            "model",
            "prompt",
            "prompt_tokens",
            "completion_tokens",
            "seconds",
            "cached",
            "cut",
        } == set(ModelCall.__annotations__)
