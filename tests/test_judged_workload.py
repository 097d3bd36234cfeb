"""memtape.lab.judged_workload and ``memtape generate judged``: facts restated under new keys."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import Query, WriteFact
from memtape.lab.judged_workload import judged_workload
from memtape.runs.files import load_run
from memtape.scenarios import parse_scenario
from tests.llm_server import ChatServer

_LINE = re.compile(r"^(?:New fact: |\[(\d+)\] )(customer\.\d+\.\w+)\.\d+: (.*)$", re.MULTILINE)


def judge_by_key(model: str, prompt: str) -> str:
    """A model that knows the workload: a candidate about the same customer and kind is
    repeated (NOOP), retracted (DELETE) or changed (UPDATE); without one, ADD."""
    (new, *stored) = _LINE.findall(prompt)
    _, about, text = new
    for number, other, held in stored:
        if other != about:
            continue
        if held == text:
            return json.dumps({"decision": "NOOP"})
        decision = "DELETE" if "no longer" in text else "UPDATE"
        return json.dumps({"decision": decision, "fact": int(number)})
    return json.dumps({"decision": "ADD"})


class TestJudgedWorkload:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert judged_workload(300, 5) == judged_workload(300, 5)

    def test_another_seed_gives_another_workload(self) -> None:
        assert judged_workload(300, 5) != judged_workload(300, 6)

    def test_no_two_writes_share_a_key(self) -> None:
        steps = parse_scenario(judged_workload(400, 2), "g.toml").steps
        keys = Counter(step.key for step in steps if isinstance(step, WriteFact))
        assert [] == [key for key, count in keys.items() if count > 1]

    def test_it_changes_repeats_and_retracts(self) -> None:
        steps = parse_scenario(judged_workload(400, 2), "g.toml").steps
        texts = [step.text for step in steps if isinstance(step, WriteFact)]
        assert any("no longer" in text for text in texts)
        assert len(set(texts)) < len(texts)

    def test_every_query_expects_a_key_written_before_it(self) -> None:
        written: set[str] = set()
        for step in parse_scenario(judged_workload(400, 3), "g.toml").steps:
            if isinstance(step, WriteFact):
                written.add(step.key)
            elif isinstance(step, Query):
                assert step.key in written

    def test_generate_writes_the_file(self, tmp_path: Path) -> None:
        out = tmp_path / "j.toml"
        assert 0 == main(["generate", "judged", "--steps", "30", "--seed", "1", "--out", str(out)])
        assert judged_workload(30, 1) == out.read_text("utf-8")


@pytest.mark.usefixtures("llm_env")
class TestJudgedRun:
    def test_a_judge_keeps_one_fact_a_customer_and_kind(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = judge_by_key
        scenario = tmp_path / "w.toml"
        scenario.write_text(judged_workload(120, 4, capacity=64), "utf-8")
        out = tmp_path / "w.jsonl"
        settings = [
            "--set",
            "forgetting.supersession=llm",
            "--set",
            "forgetting.candidates=5",
            "--set",
            "llm.model=judge",
            "--set",
            f"llm.base_url={chat_server.url}",
        ]

        assert 0 == main(["run", str(scenario), "--out", str(out), *settings])
        store = load_run(out).session.state.store
        about = Counter(".".join(store.facts[i].key.split(".")[:3]) for i in store.active)
        assert [] == [thing for thing, count in about.items() if count > 1]
        assert 0 < chat_server.requests

    def test_a_judge_benches_beside_supersession_by_key(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.answerer = judge_by_key
        scenario = tmp_path / "w.toml"
        scenario.write_text(judged_workload(60, 4), "utf-8")
        judged = ["--set", "forgetting.supersession=llm", "--set", "llm.model=judge"]
        server = ["--set", f"llm.base_url={chat_server.url}"]

        bench = ["bench", str(scenario), "--policy", "lru", "-q", "--jobs", "1"]
        assert 0 == main([*bench, *judged, *server])
        rows = capsys.readouterr().out.splitlines()
        assert "supersession=llm candidates=3" in rows[-1]
        assert "llm calls" in rows[0]
