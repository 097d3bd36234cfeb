"""memtape.policies.window.recall.EmbeddingsRecall (and memtape.llm.embedding): recall by the cosine
of embeddings, asked through the real openai SDK of a loopback server, recorded, cached, and
replayed with the server stopped."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.core.events import Recalled
from memtape.llm import embedding
from memtape.llm.embedding import cosine
from memtape.policies.session import Policies
from memtape.policies.window.recall import EmbeddingsRecall
from memtape.runs.files import load_run
from tests.llm_server import ChatServer, vector_for

EXAMPLE = Path(__file__).parent.parent / "examples" / "order-recall.toml"
"""A small window drops the order number's turn; a recall asks for it back."""


def _settings(server: ChatServer) -> list[str]:
    return [
        "--set",
        "compaction.recall=embeddings",
        "--set",
        "llm.model=embedder",
        "--set",
        f"llm.base_url={server.url}",
        "--set",
        "llm.max_retries=0",
    ]


def _recalls(path: Path) -> list[Recalled]:
    return [e for e in load_run(path).session.run.events if isinstance(e, Recalled)]


class TestCosine:
    def test_parallel_vectors_score_1_and_orthogonal_ones_0(self) -> None:
        assert (1.0, 0.0) == (cosine([3, 4], [6, 8]), cosine([1, 0], [0, 3]))

    def test_a_zero_vector_or_another_length_scores_0(self) -> None:
        assert (0.0, 0.0) == (cosine([0, 0], [1, 1]), cosine([1, 1], [1, 1, 1]))


class TestParameter:
    def test_recall_embeddings_asks_the_llm_tables_model(self) -> None:
        policies = Policies.from_params(
            {
                "compaction": {"policy": "tiered", "budget": 30, "recall": "embeddings"},
                "llm": {"model": "embedder"},
            }
        )

        assert isinstance(policies.recall, EmbeddingsRecall)
        assert ("embeddings", "embedder") == (
            policies.params()["compaction"]["recall"],
            policies.recall.config.model,
        )

    def test_the_llm_tables_embedding_model_is_kept_beside_its_model(self) -> None:
        policies = Policies.from_params(
            {
                "compaction": {"policy": "tiered", "budget": 30, "recall": "embeddings"},
                "llm": {"model": "chatter", "embedding_model": "embedder"},
            }
        )

        assert "embedder" == policies.params()["llm"]["embedding_model"]

    def test_an_empty_embedding_model_is_refused(self) -> None:
        with pytest.raises(BadInput, match="embedding_model must name a model, got ''"):
            Policies.from_params(
                {
                    "compaction": {"policy": "tiered", "budget": 30, "recall": "embeddings"},
                    "llm": {"model": "chatter", "embedding_model": ""},
                }
            )

    def test_naming_the_model_of_a_recorded_run_drops_its_embedding_model(self) -> None:
        recorded = Policies.from_params(
            {
                "compaction": {"policy": "tiered", "budget": 30, "recall": "embeddings"},
                "llm": {"model": "theirs", "embedding_model": "their-vectors"},
            },
            recorded="run.jsonl",
        )

        mine = recorded.with_settings(["llm.model=mine"])

        assert isinstance(mine.recall, EmbeddingsRecall)
        assert ("mine", None, None) == (
            mine.recall.config.model,
            mine.recall.config.embedding_model,
            mine.recall.config.recorded,
        )

    def test_an_embedding_model_named_with_the_model_is_kept(self) -> None:
        recorded = Policies.from_params(
            {
                "compaction": {"policy": "tiered", "budget": 30, "recall": "embeddings"},
                "llm": {"model": "theirs", "embedding_model": "their-vectors"},
            },
            recorded="run.jsonl",
        )

        mine = recorded.with_settings(["llm.model=mine", "llm.embedding_model=my-vectors"])

        assert isinstance(mine.recall, EmbeddingsRecall)
        assert "my-vectors" == mine.recall.config.embedding_model

    def test_without_an_llm_table_it_is_one_clear_line(self) -> None:
        with pytest.raises(BadInput, match=r'recall = "embeddings" asks a model for embeddings'):
            Policies.from_params(
                {"compaction": {"policy": "tiered", "budget": 30, "recall": "embeddings"}}
            )


@pytest.mark.usefixtures("llm_env")
class TestThroughTheServer:
    def test_a_recall_finds_the_turn_nearest_the_query_and_records_its_scores(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        out = tmp_path / "recall.jsonl"

        assert 0 == main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])

        (recalled,) = _recalls(out)
        left = load_run(out).session.state.window.left
        texts = {number: text for number, text, _ in left}
        query = vector_for(recalled.query)
        expected = sorted(texts, key=lambda n: (-cosine(query, vector_for(texts[n])), n))
        assert tuple(expected[: recalled.k]) == recalled.found
        assert [cosine(query, vector_for(texts[n])) for n in recalled.found] == list(
            recalled.scores
        )
        assert recalled.brought

    def test_a_recall_embeds_its_query_and_the_turns_that_left_in_one_request(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])

        (body,) = chat_server.embedded
        (recalled,) = _recalls(out)
        left = [text for _, text, _ in load_run(out).session.state.window.left]
        assert ("embedder", "float", recalled.query) == (
            body["model"],
            body["encoding_format"],
            body["input"][0],
        )
        assert [] == [text for text in body["input"][1:] if text not in left]

    def test_texts_are_sent_in_requests_of_at_most_a_chunk(
        self, tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        whole, chunked = tmp_path / "whole.jsonl", tmp_path / "chunked.jsonl"
        main(["run", str(EXAMPLE), "--out", str(whole), *_settings(chat_server), "--no-cache"])
        (body,) = chat_server.embedded
        monkeypatch.setattr(embedding, "CHUNK", 2)

        main(["run", str(EXAMPLE), "--out", str(chunked), *_settings(chat_server), "--no-cache"])

        sizes = [len(sent["input"]) for sent in chat_server.embedded[1:]]
        assert ([2, 2, 1], body["input"]) == (
            sizes,
            [text for sent in chat_server.embedded[1:] for text in sent["input"]],
        )
        assert _recalls(whole) == _recalls(chunked)

    def test_the_embedding_model_is_asked_where_the_table_names_one(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        out = tmp_path / "recall.jsonl"
        settings = [*_settings(chat_server), "--set", "llm.embedding_model=vectors"]

        assert 0 == main(["run", str(EXAMPLE), "--out", str(out), *settings])
        assert ["vectors"] == [body["model"] for body in chat_server.embedded]

    def test_the_run_replays_and_checks_with_the_server_stopped(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        chat_server.stop()
        capsys.readouterr()

        assert (0, 0, 0) == (
            main(["show", str(out)]),
            main(["timeline", str(out)]),
            main(["check", str(out)]),
        )
        assert "re-decides to itself" in capsys.readouterr().out

    def test_a_second_run_is_answered_from_the_cache_with_the_server_stopped(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        main(["run", str(EXAMPLE), "--out", str(first), *_settings(chat_server)])
        settings = _settings(chat_server)
        chat_server.stop()

        assert 0 == main(["run", str(EXAMPLE), "--out", str(second), *settings])
        assert _recalls(first) == _recalls(second)

    def test_a_fork_re_decides_its_recall_from_the_cache(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        out, forked = tmp_path / "recall.jsonl", tmp_path / "forked.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        chat_server.stop()

        status = main(
            ["fork", str(out), "--at", "0", "--set", "compaction.budget=30", "--out", str(forked)]
        )

        assert 0 == status
        assert [r.found for r in _recalls(out)] == [r.found for r in _recalls(forked)]

    def test_a_failing_server_is_one_line_and_nothing_is_written(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.fail(500, times=5)
        out = tmp_path / "recall.jsonl"

        status = main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])

        err = capsys.readouterr().err
        assert (2, False, 1) == (status, out.exists(), len(err.splitlines()))
        assert f"the model server {chat_server.url} answered 500 Internal Server Error" in err

    def test_a_run_read_without_trust_sends_nothing(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        sent = len(chat_server.embedded)
        capsys.readouterr()

        forked = tmp_path / "forked.jsonl"
        fork = ["fork", str(out), "--at", "0", "--set", "compaction.budget=30"]
        status = main([*fork, "--out", str(forked), "--no-cache"])

        assert (2, sent) == (status, len(chat_server.embedded))
        assert "a file never chooses the model or the server" in capsys.readouterr().err

    def test_scores_are_finite_cosines(self, tmp_path: Path, chat_server: ChatServer) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])

        assert all(math.isfinite(s) and -1 <= s <= 1 for r in _recalls(out) for s in r.scores)


@pytest.mark.usefixtures("llm_env")
class TestCheckSendsNothing:
    def test_a_trusted_check_without_the_cache_reports_the_vectors_and_sends_nothing(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        sent = len(chat_server.embedded)
        capsys.readouterr()

        status = main(["--no-cache", "check", "--trust", str(out)])

        report = capsys.readouterr().out
        assert (1, sent) == (status, len(chat_server.embedded))
        assert "step 7 (Recall) cannot be re-decided" in report
        assert "not cached" in report
        assert "--live" in report

    def test_an_untrusted_check_with_an_empty_cache_says_the_vectors_are_not_cached(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        sent = len(chat_server.embedded)
        capsys.readouterr()

        status = main(["--no-cache", "check", str(out)])

        report = capsys.readouterr().out
        assert (1, sent) == (status, len(chat_server.embedded))
        assert "not cached" in report
        assert "--live" in report
        assert "the policies reject" not in report

    def test_a_live_check_asks_the_vectors_not_cached(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        sent = len(chat_server.embedded)
        capsys.readouterr()

        status = main(["--no-cache", "check", "--trust", "--live", str(out)])

        assert (0, True) == (status, len(chat_server.embedded) > sent)
        assert "re-decides to itself" in capsys.readouterr().out

    def test_a_live_check_of_an_untrusted_run_sends_nothing_and_says_why(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "recall.jsonl"
        main(["run", str(EXAMPLE), "--out", str(out), *_settings(chat_server)])
        sent = len(chat_server.embedded)
        capsys.readouterr()

        status = main(["--no-cache", "check", "--live", str(out)])

        report = capsys.readouterr().out
        assert (1, sent) == (status, len(chat_server.embedded))
        assert "step 7 (Recall) cannot be re-decided" in report
        assert "a file never chooses the model or the server" in report
