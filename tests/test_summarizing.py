"""The summarizing replicas: their documented defaults, the model they ask or the fallback
their header names, and what each keeps."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered
from memtape.policies.session import Policies, Session
from memtape.policies.text.llm_summary import LlmSummarizer
from memtape.policies.text.summarizers import SalientTexts
from memtape.policies.window.replicas.masking import MASK
from memtape.policies.window.replicas.summarizing import (
    OFFLINE,
    AnthropicCompaction,
    Codex,
    LangChainSummarization,
    MaskingThenSummary,
)
from memtape.policies.window.trigger import Trigger
from tests.llm_server import ChatServer
from tests.playing import play, tool, user, words

LLM = {"model": "m", "base_url": "http://127.0.0.1:9"}
"""A model table: building a policy with it asks nothing."""


def built(llm: dict[str, Any] | None = None, **table: Any) -> Any:
    """The compaction policy a scenario table builds (with an ``[llm]`` table when given)."""
    tables: dict[str, Any] = {"compaction": table}
    if llm is not None:
        tables["llm"] = llm
    return Policies.from_params(tables, "s.toml").compaction


def own(policy: Any) -> dict[str, Any]:
    """A policy's table without what every rolling summary writes."""
    shared = ("policy", "budget", "summary_tokens", "tokenizer")
    return {k: v for k, v in policy.params().items() if k not in shared}


SALIENT = {"summarizer": "salient", "fallback": OFFLINE}
"""What an offline replica's table says of its summarizer."""


class TestDefaults:
    def test_anthropic_compaction(self) -> None:
        expected = {"keep": 0, "trigger": 150_000, **SALIENT}
        assert expected == own(built(policy="anthropic-compaction", budget=50))

    def test_claude_code(self) -> None:
        expected = {"keep": 2, "trigger": "95%", "context_window": 200_000, **SALIENT}
        assert expected == own(built(policy="claude-code", budget=50))

    def test_codex_clamps_to_90_percent_of_its_window(self) -> None:
        expected = {
            "keep": 0,
            "trigger": 244_800,
            "context_window": 272_000,
            "user_message_tokens": 20_000,
            **SALIENT,
        }
        assert expected == own(built(policy="codex", budget=50))

    @pytest.mark.parametrize(("limit", "trigger"), [(100_000, 100_000), (300_000, 244_800)])
    def test_codex_triggers_at_its_limit_within_the_clamp(self, limit: int, trigger: int) -> None:
        policy = built(policy="codex", budget=50, model_auto_compact_token_limit=limit)
        assert (trigger,) == policy.trigger.tokens

    def test_langchain_summarization(self) -> None:
        expected = {"keep": 20, "trim_tokens_to_summarize": 4000, **SALIENT}
        assert expected == own(built(policy="langchain-summarization", budget=50))

    def test_masking_then_summary(self) -> None:
        expected = {"keep": 2, "mask_keep": 10, "placeholder": MASK, **SALIENT}
        assert expected == own(built(policy="masking-then-summary", budget=50))

    @pytest.mark.parametrize(
        "name",
        ["anthropic-compaction", "claude-code", "codex", "langchain-summarization"],
    )
    def test_each_table_builds_the_replica_again(self, name: str) -> None:
        policy = built(policy=name, budget=50)
        assert policy == built(**policy.params())


class TestSummarizer:
    def test_offline_the_salient_summarizer_stands_in(self) -> None:
        assert isinstance(built(policy="claude-code", budget=50).summarizer, SalientTexts)

    def test_with_a_model_table_the_model_summarizes(self) -> None:
        policy = built(LLM, policy="claude-code", budget=50)
        assert isinstance(policy.summarizer, LlmSummarizer)
        assert "fallback" not in policy.params()

    def test_instructions_are_the_prompt_and_the_table_keeps_them(self) -> None:
        policy = built(LLM, policy="anthropic-compaction", budget=50, instructions="Keep ids.")
        assert policy.summarizer.prompt.startswith("Keep ids.\n")
        assert "{turns}" in policy.summarizer.prompt
        table = policy.params()
        assert "Keep ids." == table["instructions"]
        assert "prompt" not in table
        assert policy == built(LLM, **table)

    def test_instructions_and_a_prompt_are_refused_together(self) -> None:
        with pytest.raises(BadInput, match="instructions or a prompt, not both"):
            built(LLM, policy="anthropic-compaction", budget=50, instructions="a", prompt="{turns}")

    def test_the_run_header_says_the_fallback(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "run.jsonl"
        settings = ["--set", "compaction.policy=claude-code", "--out", str(out)]
        assert 0 == main(["run", "refund-desk", *settings])
        header = json.loads(out.read_text("utf-8").splitlines()[0])
        assert OFFLINE == header["policies"]["compaction"]["fallback"]


class TestWhatEachKeeps:
    def test_anthropic_compaction_makes_the_summary_the_new_start(self) -> None:
        policy = AnthropicCompaction(20, trigger=Trigger((20,)))
        state, _ = play(policy, tool(9), tool(9), tool(9))
        assert (0, 1) == (len(state.window.hot), len(state.window.warm))

    def test_codex_keeps_the_newest_user_turns_that_fit(self) -> None:
        policy = Codex(30, user_message_tokens=12, trigger=Trigger((30,)))
        turns = [user(4), tool(9), user(4), tool(9), user(4)]  # 5, 10, 5, 10, 5 tokens
        state, _ = play(policy, *turns)
        assert [3, 5] == [turn.turn for turn in state.window.hot]

    def test_langchain_summarizes_only_the_newest_tokens(self) -> None:
        seen: list[list[int]] = []

        def summarize(previous: str, turns: Any, limit: int) -> str:
            seen.append([turn.turn for turn in turns])
            return ""

        policy = LangChainSummarization(
            30, keep=1, summarizer=summarize, trim_tokens_to_summarize=20
        )
        play(policy, tool(9), tool(9), tool(9), tool(9))
        assert [[2, 3]] == seen

    def test_masking_then_summary_masks_under_the_budget(self) -> None:
        policy = MaskingThenSummary(1000, mask_keep=1)
        state, _ = play(policy, tool(9), tool(9))
        assert MASK == state.window.warm[0].text

    def test_masking_then_summary_summarizes_over_the_budget(self) -> None:
        policy = MaskingThenSummary(25, keep=1, mask_keep=5)
        state, _ = play(policy, tool(9), tool(9), tool(9))
        assert [3] == [turn.turn for turn in state.window.hot]
        assert "t3 t4 t5 t6 t7 t8" == state.window.warm[-1].text  # capped at a quarter

    def test_a_user_turn_is_what_codex_keeps_not_the_assistants(self) -> None:
        policy = Codex(10, user_message_tokens=100, trigger=Trigger((10,)))
        state, _ = play(policy, AddTurn("assistant", words(9)), user(9))
        assert [2] == [turn.turn for turn in state.window.hot]


class TestAskingAModel:
    @pytest.mark.usefixtures("llm_env")
    @pytest.mark.parametrize("name", ["anthropic-compaction", "claude-code", "codex"])
    def test_each_summary_is_asked_and_recorded(self, chat_server: ChatServer, name: str) -> None:
        """With an ``[llm]`` table the replica asks the model, and its answer is the summary
        the event records, with the call."""
        chat_server.answerer = lambda model, prompt: "the customer wants a refund"
        table = {"policy": name, "budget": 20, "trigger": 20, "instructions": "Keep ids."}
        llm = {"model": "m", "base_url": chat_server.url, "max_retries": 0}
        session = Session(Policies.from_params({"compaction": table, "llm": llm}, "s.toml"))
        for command in (tool(9), tool(9), tool(9)):
            session.execute(command)
        compactions = [e for e in session.run.events if isinstance(e, CompactionTriggered)]
        assert "the customer wants a refund" == compactions[0].warm[-1].text
        assert "the customer wants a refund" == compactions[0].asked[0].output
        assert chat_server.requests > 0
