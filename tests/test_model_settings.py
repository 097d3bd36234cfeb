"""The [llm] table: policies.plumbing.model_settings, memtape.llm.config, and the policies' llm."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.llm.config import OPENAI, ModelConfig
from memtape.policies.plumbing.model_settings import model_config
from memtape.policies.session import Policies
from memtape.policies.text.llm_summary import LlmSummarizer
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.scenarios import parse_scenario

ROLLING = {"policy": "rolling-summary", "budget": 30, "summarizer": "llm"}

SCENARIO = """
[llm]
model = "small-model"
base_url = "http://127.0.0.1:9/v1"
seed = 7

[compaction]
policy = "rolling-summary"
budget = 30
summarizer = "llm"

[[step]]
turn = "user"
text = "hi"
"""


def _refused(data: dict[str, Any], *, strict: bool = True) -> str:
    with pytest.raises(BadInput) as caught:
        model_config(data, "s.toml: [llm]", strict=strict)
    return str(caught.value)


class TestTable:
    def test_a_table_names_the_model_and_takes_the_defaults(self) -> None:
        assert ModelConfig("m", None, 0.0, None, 60.0, 2) == model_config({"model": "m"}, "here")

    def test_every_setting_is_read(self) -> None:
        table = {
            "model": "m",
            "base_url": "http://localhost:11434/v1",
            "temperature": 0.5,
            "seed": 3,
            "timeout": 2.5,
            "max_retries": 4,
        }

        assert ModelConfig("m", "http://localhost:11434/v1", 0.5, 3, 2.5, 4) == model_config(
            table, "here"
        )

    def test_the_table_reads_back_to_the_same_settings(self) -> None:
        config = ModelConfig("m", "http://h/v1", 0.2, 9, 3.0, 1)

        assert config == model_config(config.table(), "here")

    def test_the_answer_cap_is_64_kib_and_written_only_when_another(self) -> None:
        capped = model_config({"model": "m", "max_answer_bytes": 10}, "here")

        assert (65536, 10) == (ModelConfig("m").max_answer_bytes, capped.max_answer_bytes)
        assert ("max_answer_bytes" in ModelConfig("m").table(), 10) == (
            False,
            capped.table()["max_answer_bytes"],
        )
        assert capped == model_config(capped.table(), "here")

    def test_a_model_is_required(self) -> None:
        assert "s.toml: [llm]: missing parameter model" == _refused({})

    def test_an_empty_model_is_refused(self) -> None:
        assert _refused({"model": " "}).startswith("s.toml: [llm]: model must name a model")

    @pytest.mark.parametrize("secret", ["api_key", "key", "token", "password"])
    def test_a_secret_is_refused_and_the_variable_named(self, secret: str) -> None:
        message = _refused({"model": "m", secret: "sk-123"})

        assert message.startswith(f"s.toml: [llm]: {secret} does not belong in a scenario")
        assert "OPENAI_API_KEY" in message
        assert "sk-123" not in message

    def test_an_unknown_setting_is_named(self) -> None:
        assert "s.toml: [llm]: unknown parameter top_k" == _refused({"model": "m", "top_k": 4})

    @pytest.mark.parametrize(
        ("name", "value"),
        [
            ("temperature", 3),
            ("temperature", -1),
            ("timeout", 0),
            ("max_retries", -1),
            ("max_answer_bytes", 0),
        ],
    )
    def test_an_impossible_number_is_refused(self, name: str, value: int) -> None:
        assert _refused({"model": "m", name: value}).startswith(f"s.toml: [llm]: {name} must be")

    def test_a_seed_must_be_an_integer(self) -> None:
        assert "seed must be an integer, got 1.5" in _refused({"model": "m", "seed": 1.5})

    def test_a_scenario_base_url_must_be_http(self) -> None:
        assert "base_url must be an http:// or https:// URL" in _refused(
            {"model": "m", "base_url": "localhost:8000"}
        )

    def test_a_run_files_base_url_is_read_as_recorded(self) -> None:
        """A redacted copy's header holds a placeholder where the URL was."""
        config = model_config({"model": "m", "base_url": "word word"}, "here", strict=False)

        assert "word word" == config.base_url


class TestServer:
    def test_the_tables_base_url_comes_first(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere/v1")

        assert "http://here/v1" == ModelConfig("m", "http://here/v1/").server()

    def test_then_the_sdks_variable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere/v1")

        assert "http://elsewhere/v1" == ModelConfig("m").server()

    def test_then_openai(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

        assert OPENAI == ModelConfig("m").server()

    def test_a_recorded_tables_base_url_is_never_the_server(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://mine/v1")
        config = ModelConfig("m", "http://theirs/v1", recorded="run.jsonl")

        assert ("http://mine/v1", "http://theirs/v1") == (config.server(), config.named_server())

    def test_only_a_recorded_table_is_refused(self) -> None:
        assert None is ModelConfig("m", "http://here/v1").refusal()
        refusal = ModelConfig("m", "http://here/v1", recorded="run.jsonl").refusal()
        assert refusal is not None
        assert refusal.startswith(
            "run.jsonl: the run's [llm] table records model 'm' at http://here/v1; "
        )

    def test_the_parameters_are_temperature_and_any_seed(self) -> None:
        assert {"temperature": 0.0} == ModelConfig("m").parameters()
        assert {"temperature": 0.0, "seed": 2} == ModelConfig("m", seed=2).parameters()


class TestPolicies:
    def test_a_scenarios_llm_table_is_the_model_its_summarizer_asks(self) -> None:
        policies = parse_scenario(SCENARIO, "s.toml").policies

        assert ModelConfig("small-model", "http://127.0.0.1:9/v1", seed=7) == policies.llm
        summarizer = getattr(policies.compaction, "summarizer", None)
        assert isinstance(summarizer, LlmSummarizer)
        assert policies.llm == summarizer.config

    def test_the_params_carry_the_llm_table(self) -> None:
        policies = parse_scenario(SCENARIO, "s.toml").policies

        assert policies.llm is not None
        assert policies.llm.table() == policies.params()["llm"]
        assert policies == Policies.from_params(policies.params())

    def test_set_changes_the_model(self) -> None:
        policies = parse_scenario(SCENARIO, "s.toml").policies.with_settings(["llm.model=big"])

        assert policies.llm is not None
        assert "big" == policies.llm.model
        assert isinstance(policies.compaction, RollingSummary)
        assert isinstance(policies.compaction.summarizer, LlmSummarizer)
        assert "big" == policies.compaction.summarizer.config.model

    def test_a_recorded_table_stays_recorded_until_the_model_is_named(self) -> None:
        tables = {"llm": {"model": "theirs", "base_url": "http://theirs/v1"}}
        policies = Policies.from_params(tables, imports=False, recorded="run.jsonl")

        warmer = policies.with_settings(["llm.temperature=0.5"]).llm
        named = policies.with_settings(["llm.model=mine"]).llm
        assert (ModelConfig("theirs", "http://theirs/v1", 0.5), "run.jsonl") == (
            warmer,
            warmer and warmer.recorded,
        )
        assert (ModelConfig("mine"), None) == (named, named and named.recorded)

    def test_set_base_url_must_be_http(self) -> None:
        policies = Policies.from_params({"llm": {"model": "m"}}, imports=False, recorded="r")

        with pytest.raises(BadInput, match=r"^--set llm.base_url: must be an http:// or https"):
            policies.with_settings(["llm.model=n", "llm.base_url=file:///etc"])

    def test_set_makes_an_llm_table_where_there_was_none(self) -> None:
        policies = Policies.from_params({"compaction": {"policy": "tiered", "budget": 40}})

        changed = policies.with_settings(["llm.model=m", "compaction.policy=rolling-summary"])
        assert ModelConfig("m") == changed.llm

    def test_set_cannot_bring_in_a_key(self) -> None:
        policies = parse_scenario(SCENARIO, "s.toml").policies

        with pytest.raises(BadInput, match=r"^--set: \[llm\]: api_key does not belong"):
            policies.with_settings(["llm.api_key=sk-1"])

    def test_summarizer_llm_without_a_model_says_where_to_name_one(self) -> None:
        with pytest.raises(BadInput) as caught:
            Policies.from_params({"compaction": ROLLING}, "s.toml")

        assert str(caught.value).startswith(
            's.toml: [compaction]: summarizer "llm" needs a model: add an [llm] table'
        )

    def test_an_llm_table_that_is_not_a_table_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^s.toml: \[llm\] must be a table"):
            Policies.from_params({"llm": "gpt"}, "s.toml")
