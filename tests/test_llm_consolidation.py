"""memtape.policies.consolidation.llm: a model distills episodes into facts and rules (JSON)."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import re
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.events import (
    BlockEdit,
    Consolidated,
    EpisodeRecorded,
    FactWritten,
    ProceduralRule,
    SemanticFact,
)
from memtape.llm.usable import Refused
from memtape.policies.consolidation.llm import DEFAULT_PROMPT, distilled
from memtape.runs.files import load_run
from tests.chained import lines_of
from tests.llm_server import ChatServer

EPISODES = (EpisodeRecorded(1, "The tool said a 10% fee applies."), EpisodeRecorded(4, "Dana"))


def distiller(model: str, prompt: str) -> str:
    """A model that reads the episodes from the prompt: a name becomes a fact, a fee a rule."""
    semantic, procedural = [], []
    for number, text in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE):
        name = re.search(r"name is ([A-Z][a-z]+)", text)
        if name:
            semantic.append(
                {
                    "key": "user.name",
                    "text": f"user.name = {name.group(1)}",
                    "importance": 0.9,
                    "episode": int(number),
                }
            )
        if "restocking fee" in text:
            procedural.append({"text": "after the window, apply the fee", "episode": int(number)})
    return json.dumps({"semantic": semantic, "procedural": procedural})


def _settings(server: ChatServer, retries: int = 0) -> list[str]:
    return [
        "--set",
        "consolidation.policy=llm",
        "--set",
        "llm.model=distiller",
        "--set",
        f"llm.base_url={server.url}",
        "--set",
        f"llm.max_retries={retries}",
    ]


class TestContract:
    def test_facts_and_rules_are_read_from_the_json(self) -> None:
        output = json.dumps(
            {
                "semantic": [{"key": "k", "text": "t", "importance": 1, "episode": 4}],
                "procedural": [{"text": "do it", "episode": 1}],
            }
        )

        assert (
            (SemanticFact("k", "t", 1.0, 4),),
            (ProceduralRule("do it", 1),),
        ) == distilled(output, EPISODES)

    def test_a_fenced_answer_is_read(self) -> None:
        assert ((), ()) == distilled('```json\n{"semantic": []}\n```', EPISODES)

    @pytest.mark.parametrize(
        ("output", "reason"),
        [
            ("the user is Dana", "it is not JSON"),
            ("[]", "it is not a JSON object"),
            ('{"semantic": {}}', "semantic is not a list"),
            (
                '{"semantic": [{"key": " ", "text": "t", "importance": 0.5, "episode": 1}]}',
                "semantic fact 1 has an empty key",
            ),
            (
                '{"semantic": [{"key": "k", "text": "t", "importance": 1.5, "episode": 1}]}',
                "semantic fact 1 has importance 1.5, not a number in [0, 1]",
            ),
            (
                '{"semantic": [{"key": "k", "text": "t", "importance": true, "episode": 1}]}',
                "semantic fact 1 has importance True, not a number in [0, 1]",
            ),
            (
                '{"semantic": [{"key": "k", "text": "t", "importance": 0.5, "episode": 2}]}',
                "semantic fact 1 names episode 2, which is not pending",
            ),
            ('{"procedural": [{"text": "", "episode": 1}]}', "procedural rule 1 has an empty text"),
        ],
    )
    def test_an_answer_that_breaks_the_contract_is_refused_with_why(
        self, output: str, reason: str
    ) -> None:
        with pytest.raises(Refused) as caught:
            distilled(output, EPISODES)

        assert str(caught.value).startswith(reason)


@pytest.mark.usefixtures("llm_env")
class TestSleepPass:
    def test_the_seeds_episodes_become_a_fact_and_a_rule(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = distiller
        out = tmp_path / "sleep.jsonl"

        assert 0 == main(["run", "sleep-pass", "--out", str(out), *_settings(chat_server)])
        events = load_run(out).session.run.events
        (consolidated,) = [e for e in events if isinstance(e, Consolidated)]
        assert (1, 2, 3, 4) == consolidated.episodes
        assert (SemanticFact("user.name", "user.name = Dana", 0.9, 4),) == consolidated.semantic
        assert (ProceduralRule("after the window, apply the fee", 2),) == consolidated.procedural
        assert 1 == len(consolidated.asked) == chat_server.requests
        written = [e for e in events if isinstance(e, FactWritten)]
        assert ["user.name = Dana"] == [fact.text for fact in written]
        assert {"type": "json_object"} == chat_server.bodies[0]["response_format"]
        assert (
            "[4] The user confirmed their name is Dana."
            in (chat_server.bodies[0]["messages"][0]["content"])
        )

    def test_the_default_prompt_lists_the_episodes(self) -> None:
        assert "{episodes}" in DEFAULT_PROMPT
        assert '"semantic"' in DEFAULT_PROMPT

    def test_a_refused_answer_is_asked_again_with_the_reason(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        answers = iter(["not json at all"])
        chat_server.answerer = lambda model, prompt: next(answers, None) or distiller(model, prompt)
        out = tmp_path / "sleep.jsonl"

        assert 0 == main(["run", "sleep-pass", "--out", str(out), *_settings(chat_server, 1)])
        (consolidated,) = [
            e for e in load_run(out).session.run.events if isinstance(e, Consolidated)
        ]
        assert "not json at all" == consolidated.asked[0].output
        assert 2 == len(consolidated.asked) == chat_server.requests
        assert (
            "Your answer 1 was refused: it is not JSON"
            in (chat_server.bodies[1]["messages"][0]["content"])
        )
        assert 1 == len(consolidated.semantic)

    def test_an_answer_refused_every_time_rejects_the_pass_and_writes_nothing(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = '{"semantic": [{"key": "k", "text": "t", "importance": 1.5, "episode": 4}]}'
        chat_server.answerer = lambda model, prompt: bad
        out = tmp_path / "sleep.jsonl"
        out.write_bytes(b"before\n")

        assert 2 == main(["run", "sleep-pass", "--out", str(out), *_settings(chat_server, 2)])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert err.startswith(
            "memtape: error: sleep-pass: step 5: model 'distiller' gave no usable "
            "consolidation in 3 tries: the last answer was refused: semantic fact 1 has "
            "importance 1.5, not a number in [0, 1]"
        )
        assert 3 == chat_server.requests
        assert b"before\n" == out.read_bytes()

    def test_the_run_checks_with_the_server_gone(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.answerer = distiller
        out = tmp_path / "sleep.jsonl"
        assert 0 == main(["run", "sleep-pass", "--out", str(out), *_settings(chat_server)])
        chat_server.stop()
        capsys.readouterr()

        assert 0 == main(["check", str(out)])
        assert "re-decides to itself" in capsys.readouterr().out
        assert 0 == main(["timeline", str(out)])
        assert "asked distiller" in capsys.readouterr().out

    def test_the_consolidated_line_carries_its_calls(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = distiller
        out = tmp_path / "sleep.jsonl"
        assert 0 == main(["run", "sleep-pass", "--out", str(out), *_settings(chat_server)])

        (line,) = [line for line in lines_of(out)[1:] if line["type"] == "Consolidated"]
        assert 4 == line["v"]
        assert ["episodes", "semantic", "procedural", "asked"] == list(line["event"])

    def test_a_rules_pass_writes_a_version_2_line_without_asked(self, tmp_path: Path) -> None:
        out = tmp_path / "sleep.jsonl"
        assert 0 == main(["run", "sleep-pass", "--out", str(out)])

        (line,) = [line for line in lines_of(out)[1:] if line["type"] == "Consolidated"]
        assert ["episodes", "semantic", "procedural"] == list(line["event"])


HUMAN_BLOCK_SCENARIO = """\
[scenario]
name = "sleep-blocks"

[compaction]
policy = "sliding-window"
budget = 60

[forgetting]
policy = "lru"
capacity = 4

[consolidation]
policy = "rules"

[[block]]
label = "human"
limit = 40
value = "Name: Dana."

[[block]]
label = "persona"
limit = 40
value = "Polite."
read_only = true

[[step]]
episode = "The user moved to Porto."

[[step]]
consolidate = true
"""


def mover(model: str, prompt: str) -> str:
    """A sleep-time agent: a move in the episodes is appended to the 'human' block."""
    city = re.search(r"moved to ([A-Z][a-z]+)", prompt)
    edits = (
        [{"label": "human", "op": "append", "text": f"Lives in {city.group(1)}."}] if city else []
    )
    return json.dumps({"semantic": [], "procedural": [], "blocks": edits})


@pytest.mark.usefixtures("llm_env")
class TestBlocksEditedByTheModel:
    def _run(self, tmp_path: Path, server: ChatServer, retries: int = 0) -> tuple[int, Path]:
        scenario = tmp_path / "sleep-blocks.toml"
        scenario.write_text(HUMAN_BLOCK_SCENARIO, "utf-8")
        out = tmp_path / "sleep-blocks.jsonl"
        return main(["run", str(scenario), "--out", str(out), *_settings(server, retries)]), out

    def test_the_prompt_lists_the_blocks_and_the_answer_edits_one(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = mover

        status, out = self._run(tmp_path, chat_server)

        session = load_run(out).session
        (consolidated,) = [e for e in session.run.events if isinstance(e, Consolidated)]
        prompt = chat_server.bodies[0]["messages"][0]["content"]
        assert 0 == status
        assert (
            '[human] (limit 40): "Name: Dana."',
            '[persona] (limit 40, read-only): "Polite."',
        ) == (
            prompt.splitlines()[-4],
            prompt.splitlines()[-3],
        )
        assert (BlockEdit("human", "append", "Lives in Porto."),) == consolidated.blocks
        human = session.state.window.block("human")
        assert "Name: Dana.\nLives in Porto." == (human.value if human else None)

    def test_an_edit_past_the_limit_is_asked_again_with_the_reason(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        long = json.dumps({"blocks": [{"label": "human", "op": "append", "text": "x" * 40}]})
        answers = iter([long])
        chat_server.answerer = lambda model, prompt: next(answers, None) or mover(model, prompt)

        status, _ = self._run(tmp_path, chat_server, retries=1)

        assert (0, 2) == (status, chat_server.requests)
        assert (
            "Your answer 1 was refused: block edit 1: block 'human' holds at most 40 characters"
            in chat_server.bodies[1]["messages"][0]["content"]
        )

    def test_an_edit_of_a_read_only_block_every_time_writes_nothing(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        rude = json.dumps({"blocks": [{"label": "persona", "op": "replace", "text": "Rude."}]})
        chat_server.answerer = lambda model, prompt: rude

        status, out = self._run(tmp_path, chat_server)

        err = capsys.readouterr().err
        assert (2, False, 1) == (status, out.exists(), len(err.splitlines()))
        assert err.rstrip().endswith(
            "the last answer was refused: block edit 1: block 'persona' is read-only: no edit "
            "may change it, so this one is refused"
        )

    def test_the_run_checks_with_the_server_gone(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.answerer = mover
        _, out = self._run(tmp_path, chat_server)
        chat_server.stop()
        capsys.readouterr()

        assert 0 == main(["check", str(out)])
        assert "re-decides to itself" in capsys.readouterr().out

    def test_a_session_without_blocks_is_asked_what_it_was(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = distiller
        out = tmp_path / "sleep.jsonl"

        assert 0 == main(["run", "sleep-pass", "--out", str(out), *_settings(chat_server)])
        assert "Memory blocks" not in chat_server.bodies[0]["messages"][0]["content"]
