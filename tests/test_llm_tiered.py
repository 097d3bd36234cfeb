"""Tiered compaction with a model: warm = "llm" and gist = "llm", against a real test server.

The stand-ins and the gist are asked through the real openai SDK of the
loopback server (``tests.llm_server``); the runs are then read, checked,
redacted and forked with the server gone, a second run is answered by the
cache, and a failing server is one line with nothing written.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis.stateful import run_state_machine_as_test

from memtape.checking.invariants import check_gist
from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, ModelCall, TurnAdded, WarmItem
from memtape.core.state import INITIAL_STATE
from memtape.llm.answers import Replay, answering
from memtape.llm.asking import prompt_hash
from memtape.llm.config import ModelConfig
from memtape.policies.session import Policies, Session
from memtape.policies.text.tier_writers import (
    DEFAULT_GIST_PROMPT,
    DEFAULT_WARM_PROMPT,
    NO_ITEMS,
    LlmGist,
    LlmWarm,
)
from memtape.policies.window.tiered import TieredCompaction, gist_for
from memtape.reducers import evolve
from memtape.scenarios import load_scenario
from tests.chained import lines_of, rechained, write_lines
from tests.conftest import SECRET_KEY
from tests.llm_runs import MODEL, tiered
from tests.llm_server import ChatServer, answer_for
from tests.playing import play
from tests.test_testing_machine import PASSING, machine_for

ROOT = Path(__file__).resolve().parent.parent

LLM = {"model": MODEL, "max_retries": 0, "timeout": 5}

NOWHERE = "http://127.0.0.1:9/v1"
"""A server that is never asked (a policy is only built)."""


def _table(url: str, **compaction: Any) -> dict[str, dict[str, Any]]:
    return {
        "compaction": {"policy": "tiered", "budget": 30, "hot_n": 2, **compaction},
        "llm": {**LLM, "base_url": url},
    }


def _compactions(events: Any) -> list[CompactionTriggered]:
    return [e for e in events if isinstance(e, CompactionTriggered)]


def _session(tmp_path: Path, url: str, **tables: str) -> Session:
    loaded = load_scenario(str(tiered(tmp_path / "lookups.toml", url, **tables)))
    session = Session(loaded.policies)
    session.execute_all(loaded.steps)
    return session


def _record(tmp_path: Path, server: ChatServer, name: str = "lookups", **tables: str) -> Path:
    path = tiered(tmp_path / "lookups.toml", server.url, **tables)
    out = tmp_path / f"{name}.jsonl"
    assert 0 == main(["run", str(path), "--out", str(out)])
    return out


def _answers(run: Path) -> list[dict[str, Any]]:
    return [
        call
        for line in lines_of(run)[1:]
        if line["type"] == "CompactionTriggered"
        for call in line["event"].get("asked", [])
    ]


def _words(n: int, stem: str) -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


class TestParams:
    def test_the_defaults_write_the_table_they_always_wrote(self) -> None:
        """No warm or gist entry: a run made with the defaults has its old header."""
        policies = Policies.from_params({"compaction": {"policy": "tiered", "budget": 40}})

        assert {"policy": "tiered", "budget": 40, "hot_n": 2, "tokenizer": "words"} == (
            policies.params()["compaction"]
        )

    def test_naming_the_defaults_builds_the_default_policy(self) -> None:
        table = {"policy": "tiered", "budget": 40, "warm": "verbatim", "gist": "count"}

        assert TieredCompaction(40, 2) == Policies.from_params({"compaction": table}).compaction

    def test_llm_choices_round_trip_with_their_limits_and_prompts(self) -> None:
        tables = _table("http://127.0.0.1:9/v1", warm="llm", gist="llm", gist_tokens=5)
        policies = Policies.from_params(tables)
        written = policies.params()["compaction"]

        assert {
            "policy": "tiered",
            "budget": 30,
            "hot_n": 2,
            "warm": "llm",
            "warm_tokens": 7,
            "warm_prompt": DEFAULT_WARM_PROMPT,
            "gist": "llm",
            "gist_tokens": 5,
            "gist_prompt": DEFAULT_GIST_PROMPT,
            "tokenizer": "words",
        } == written
        again = Policies.from_params({**tables, "compaction": written})
        assert policies == again

    def test_an_llm_choice_without_a_model_is_one_line(self) -> None:
        for choice in ("warm", "gist"):
            table = {"policy": "tiered", "budget": 30, choice: "llm"}
            with pytest.raises(BadInput, match=rf"^s: \[compaction\]: {choice} \"llm\" needs a"):
                Policies.from_params({"compaction": table}, "s")

    def test_an_unknown_choice_names_the_known_ones(self) -> None:
        with pytest.raises(BadInput, match=r'warm must be "verbatim" or "llm", got \'model\''):
            Policies.from_params(
                {"compaction": {"policy": "tiered", "budget": 30, "warm": "model"}}
            )
        with pytest.raises(BadInput, match=r'gist must be "count" or "llm", got \'words\''):
            Policies.from_params(
                {"compaction": {"policy": "tiered", "budget": 30, "gist": "words"}}
            )
        with pytest.raises(BadInput, match=r"gist must be a string, got 3"):
            Policies.from_params({"compaction": {"policy": "tiered", "budget": 30, "gist": 3}})

    def test_a_choices_own_parameters_are_unknown_under_the_default(self) -> None:
        for own in ("warm_tokens", "warm_prompt", "gist_tokens", "gist_prompt"):
            table = {"policy": "tiered", "budget": 30, own: 3}
            with pytest.raises(BadInput, match=rf"unknown parameter {own}"):
                Policies.from_params({"compaction": table})

    def test_a_prompt_must_say_its_placeholder_in_a_scenario(self) -> None:
        with pytest.raises(BadInput, match=r"warm_prompt must say \{turns\}"):
            Policies.from_params(_table(NOWHERE, warm="llm", warm_prompt="Summarize."), "s")
        with pytest.raises(BadInput, match=r"gist_prompt must say \{items\}"):
            Policies.from_params(_table(NOWHERE, gist="llm", gist_prompt="Gist {turns}"), "s")

    def test_a_prompt_file_is_read_and_its_text_recorded(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "gist.txt").write_text("Gist of {items}\n", "utf-8")
        monkeypatch.chdir(tmp_path)
        policies = Policies.from_params(_table(NOWHERE, gist="llm", gist_prompt_file="gist.txt"))

        written = policies.params()["compaction"]
        assert "Gist of {items}\n" == written["gist_prompt"]
        assert "gist_prompt_file" not in written

    def test_a_prompt_and_its_file_together_are_refused(self) -> None:
        with pytest.raises(BadInput, match="warm_prompt and warm_prompt_file both give"):
            Policies.from_params(
                _table(NOWHERE, warm="llm", warm_prompt="{turns}", warm_prompt_file="p.txt")
            )

    def test_a_negative_limit_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"warm_tokens must be an integer >= 0"):
            Policies.from_params(_table(NOWHERE, warm="llm", warm_tokens=-1))
        with pytest.raises(BadInput, match=r"gist_tokens must be an integer >= 0, got -2"):
            TieredCompaction(30, 2, gist=LlmGist(ModelConfig("m"), -2))

    def test_set_turns_a_choice_on_and_off_again(self) -> None:
        policies = Policies.from_params(_table(NOWHERE))

        asked = policies.with_settings(["compaction.warm=llm", "compaction.warm_tokens=4"])
        assert isinstance(asked.compaction, TieredCompaction)
        assert LlmWarm(asked.compaction.warm.config, 4) == asked.compaction.warm  # type: ignore[union-attr]
        plain = asked.with_settings(["compaction.warm=verbatim"])
        assert TieredCompaction(30, 2) == plain.compaction
        assert "warm_tokens" not in plain.params()["compaction"]


@pytest.mark.usefixtures("llm_env")
class TestStandIns:
    def test_each_unit_going_warm_gets_one_stand_in_under_its_newest_turn(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        session = _session(tmp_path, chat_server.url, compaction='warm = "llm"')
        folding = [c for c in _compactions(session.run.events) if c.warm]

        assert [[3, 4], [10, 11]] == [[i.turn for i in c.warm] for c in folding]
        for compaction, body in zip(folding, chat_server.bodies, strict=True):
            (call,) = compaction.asked
            prompt = body["messages"][0]["content"]
            assert (answer_for(MODEL, prompt), prompt_hash(prompt)) == (call.output, call.prompt)
            empty, stand_in = compaction.warm
            assert ("", 0) == (empty.text, empty.tokens)
            assert (call.output, len(call.output.split())) == (stand_in.text, stand_in.tokens)
        assert 2 == chat_server.requests

    def test_the_prompt_lists_the_units_turns_and_the_limit(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        _session(tmp_path, chat_server.url, compaction='warm = "llm"')

        prompt = chat_server.bodies[0]["messages"][0]["content"]
        assert prompt == DEFAULT_WARM_PROMPT.replace("{limit}", "7").replace(
            "{turns}",
            "[3] assistant (calls lookup_1): Let me look that up.\n"
            "[4] tool (result of lookup_1): order A-1001: two charges of $180.00 on 2024-05-02",
        )

    def test_a_stand_in_is_cut_to_the_limit_and_never_costs_more_than_its_turns(
        self, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = lambda model, prompt: _words(50, "s")
        policy = TieredCompaction(10, 1, warm=LlmWarm(ModelConfig(MODEL, chat_server.url), 8))

        state, decided = play(
            policy,
            AddTurn("tool", "$1 $2 $3"),
            AddTurn("tool", _words(8, "t")),
            AddTurn("user", "x"),
        )

        limits = [
            body["messages"][0]["content"].split("at most ")[1].split()[0]
            for body in chat_server.bodies
        ]
        assert ["3", "8"] == limits
        assert ["s47 s48 s49"] == [i.text for i in _compactions(decided[1])[0].warm]
        assert ["s42 s43 s44 s45 s46 s47 s48 s49"] == [
            i.text for i in _compactions(decided[2])[0].warm if i.text
        ]
        assert state.window.tokens <= 10

    def test_a_limit_of_nothing_asks_nothing(self, chat_server: ChatServer) -> None:
        policy = TieredCompaction(10, 1, warm=LlmWarm(ModelConfig(MODEL, chat_server.url), 0))

        _, decided = play(policy, AddTurn("tool", _words(6, "t")), AddTurn("user", _words(6, "u")))

        (compaction,) = _compactions(decided[1])
        assert ((WarmItem(1, "", 0),), ()) == (compaction.warm, compaction.asked)
        assert 0 == chat_server.requests


@pytest.mark.usefixtures("llm_env")
class TestGist:
    def test_items_going_cold_are_folded_into_the_gist_in_one_call(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        session = _session(tmp_path, chat_server.url)
        pushing = [c for c in _compactions(session.run.events) if c.cold]

        (compaction,) = pushing
        assert 2 == compaction.cold
        (call,) = compaction.asked
        prompt = chat_server.bodies[1]["messages"][0]["content"]
        assert prompt == DEFAULT_GIST_PROMPT.replace("{cold}", "2").replace("{limit}", "7").replace(
            "{gist}", "(none yet)"
        ).replace("{items}", "[4] [test-model] lookup_1 A-1001 $180.00 2024-05-02")
        assert (call.output, len(call.output.split())) == (compaction.gist, compaction.gist_tokens)
        assert 3 == chat_server.requests

    def test_the_stand_ins_are_asked_before_the_gist(self, chat_server: ChatServer) -> None:
        config = ModelConfig(MODEL, chat_server.url)
        policy = TieredCompaction(9, 1, warm=LlmWarm(config, 3), gist=LlmGist(config, 2))

        _, decided = play(policy, *(AddTurn("tool", f"${n} $0 x y") for n in range(1, 4)))

        compaction = _compactions(decided[2])[0]
        assert 2 == compaction.cold
        prompts = [body["messages"][0]["content"] for body in chat_server.bodies[-2:]]
        assert [prompt_hash(prompt) for prompt in prompts] == [c.prompt for c in compaction.asked]
        assert "[2] tool: $2 $0 x y" in prompts[0]
        assert "Notes to fold in" in prompts[1]

    def test_a_gist_is_one_line_within_its_limit_and_the_window_within_budget(
        self, chat_server: ChatServer
    ) -> None:
        """Whatever the model writes, the push counts the gist at its limit and ends."""
        chat_server.answerer = lambda model, prompt: "a\nlong\n\n" + _words(40, "g")
        policy = TieredCompaction(14, 1, gist=LlmGist(ModelConfig(MODEL, chat_server.url), 4))
        turns = [AddTurn("tool", _words(4, f"t{n}_")) for n in range(8)]

        state, decided = play(policy, *turns)

        assert "g36 g37 g38 g39" == state.window.gist
        assert 4 == state.window.gist_tokens
        for n in range(1, len(turns) + 1):
            prefix = play(policy, *turns[:n])[0]
            assert prefix.window.tokens <= 14
        assert all(len(c.asked) <= 1 for events in decided for c in _compactions(events))

    def test_the_previous_gist_is_in_the_next_prompt(self, chat_server: ChatServer) -> None:
        config = ModelConfig(MODEL, chat_server.url)
        policy = TieredCompaction(8, 1, gist=LlmGist(config, 3))

        state, _ = play(policy, *(AddTurn("tool", f"${n} x y") for n in range(1, 6)))

        gists = [body["messages"][0]["content"] for body in chat_server.bodies]
        assert 3 == len(gists)
        assert "Gist so far:\n(none yet)\n" in gists[0]
        assert "Gist so far:\n[test-model] $1 $2\n" in gists[1]
        assert "Gist so far:\n$1 $2 $3\n" in gists[2]
        assert ("$2 $3 $4", 4) == (state.window.gist, len(state.window.cold))

    def test_a_gist_limit_of_nothing_asks_nothing_and_keeps_no_gist(
        self, chat_server: ChatServer
    ) -> None:
        policy = TieredCompaction(6, 1, gist=LlmGist(ModelConfig(MODEL, chat_server.url), 0))

        state, _ = play(policy, *(AddTurn("tool", "a b c") for _ in range(4)))

        assert (3, "", 0) == (len(state.window.cold), state.window.gist, state.window.gist_tokens)
        assert 0 == chat_server.requests

    def test_items_with_no_text_are_left_out_of_the_prompt(self) -> None:
        """Replayed, the writer is answered only if it asks the prompt expected."""
        writer = LlmGist(ModelConfig(MODEL), 3, "{items}|{cold}|{gist}|{limit}")
        recorded = ModelCall("g", MODEL, prompt_hash(f"{NO_ITEMS}|4|so far|3"), 0, 0, 0.0, False)

        with answering(Replay([recorded])):
            assert recorded == writer("so far", [WarmItem(3, "", 0)], 4)


class TestGistInvariant:
    def _window(self, gist: str, tokens: int, cold: int) -> Any:
        state = INITIAL_STATE
        for n in range(cold + 1):
            state = evolve(state, TurnAdded(n + 1, "tool", "a b", 3, True))
        state = evolve(
            state,
            CompactionTriggered(
                9,
                tuple(WarmItem(n + 1, "a b", 2) for n in range(cold)),
                (),
                cold,
                gist,
                tokens,
            ),
        )
        return state.window

    def test_the_count_gist_is_still_read_word_for_word(self) -> None:
        policy = TieredCompaction(9, 1)

        assert [] == check_gist(self._window(gist_for(2), 4, 2), policy, at=1)
        (wrong,) = check_gist(self._window(gist_for(3), 4, 2), policy, at=1)
        assert "2 turns are cold, but the gist reads '[3 earlier turns summarized]'" == (
            wrong.message
        )
        (model,) = check_gist(self._window("refund R-77", 2, 2), policy, at=1)
        assert "gist" == model.invariant

    def test_a_models_gist_within_its_limit_is_accepted(self) -> None:
        policy = TieredCompaction(9, 1, gist=LlmGist(ModelConfig("m"), 3))

        assert [] == check_gist(self._window("refund R-77 sent", 3, 2), policy, at=1)
        assert [] == check_gist(self._window("", 0, 2), policy, at=1)

    def test_a_models_gist_over_its_limit_or_at_the_wrong_cost_is_caught(self) -> None:
        policy = TieredCompaction(9, 1, gist=LlmGist(ModelConfig("m"), 3))

        (over,) = check_gist(self._window("one two three four", 4, 2), policy, at=1)
        assert "costs 4 tokens, over gist_tokens 3" in over.message
        (cost,) = check_gist(self._window("one two", 3, 2), policy, at=1)
        assert "costs 2 tokens, not 3" in cost.message

    def test_a_gist_with_nothing_cold_is_caught(self) -> None:
        policy = TieredCompaction(9, 1, gist=LlmGist(ModelConfig("m"), 3))

        (caught,) = check_gist(self._window("stale", 1, 0), policy, at=1)
        assert "no turn is cold, but the gist reads 'stale'" == caught.message


def _offline(*commands: list[str], cwd: Path) -> list[int]:
    """Each command's exit status, run in a fresh interpreter where ``import openai`` fails."""
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.modules["openai"] = None  # import openai now raises ImportError
        from memtape.cli import main
        print(json.dumps([main(args) for args in {list(commands)!r}]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MEMTAPE_LLM_CACHE": "none.db"},
        check=False,
    )
    assert "" == done.stderr
    codes: list[int] = json.loads(done.stdout.splitlines()[-1])
    return codes


@pytest.mark.usefixtures("llm_env")
class TestRecorded:
    def test_the_header_records_the_choices_limits_and_prompts(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        header = lines_of(_record(tmp_path, chat_server))[0]["policies"]

        compaction = header["compaction"]
        assert ("llm", 7, "llm", 7) == (
            compaction["warm"],
            compaction["warm_tokens"],
            compaction["gist"],
            compaction["gist_tokens"],
        )
        assert (DEFAULT_WARM_PROMPT, DEFAULT_GIST_PROMPT) == (
            compaction["warm_prompt"],
            compaction["gist_prompt"],
        )
        assert MODEL == header["llm"]["model"]

    def test_reading_commands_run_with_the_server_gone_and_no_sdk(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.stop()
        ends = len(lines_of(run)) - 1

        codes = _offline(
            ["show", str(run)],
            ["show", str(run), "--at", "12", "--json"],
            ["timeline", str(run), "--json"],
            ["diff", str(run), "0", str(ends)],
            ["why", str(run), "turn:4"],
            ["view", str(run), "--out", "page.html"],
            ["fork", str(run), "--at", str(ends), "--out", "fork.jsonl"],
            ["export", str(run), "--redact", "--out", "redacted.jsonl"],
            ["check", str(run)],
            ["check", "redacted.jsonl"],
            cwd=tmp_path,
        )

        assert [0] * 10 == codes
        assert 3 == chat_server.requests
        assert (tmp_path / "page.html").is_file()

    def test_show_prints_the_models_gist_and_stand_in(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.stop()
        capsys.readouterr()

        assert 0 == main(["show", str(run), "--json"])
        window = json.loads(capsys.readouterr().out)["window"]
        assert "[test-model] lookup_1 A-1001 $180.00 2024-05-02" == window["cold"]["gist"]
        assert "[test-model] track_2 B-2002 2024-05-09 C-55" == window["warm"][-1]["text"]

    def test_a_second_run_is_answered_by_the_cache_to_the_byte(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        first = _record(tmp_path, chat_server, "one")
        second = _record(tmp_path, chat_server, "two")
        third = _record(tmp_path, chat_server, "three")

        assert 3 == chat_server.requests
        assert [False] * 3 == [call["cached"] for call in _answers(first)]
        assert [{**call, "cached": True} for call in _answers(first)] == _answers(second)
        assert second.read_bytes() == third.read_bytes()

    def test_set_asks_a_model_of_a_plain_scenario(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        path = tiered(tmp_path / "plain.toml", chat_server.url, compaction="")
        out = tmp_path / "set.jsonl"

        assert 0 == main(["run", str(path), "--out", str(out), "--set", "compaction.gist=llm"])
        assert 2 == len(_answers(out)) == chat_server.requests
        assert "gist_prompt" in lines_of(out)[0]["policies"]["compaction"]

    def test_a_redacted_copy_masks_the_gist_and_stand_ins_and_keeps_the_choices(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        run = _record(tmp_path, chat_server)
        copy = tmp_path / "copy.jsonl"

        assert 0 == main(["export", str(run), "--redact", "--out", str(copy)])
        text = copy.read_text("utf-8")
        assert all(figure not in text for figure in ("A-1001", "B-2002", "C-55", "lookup_1"))
        compaction = lines_of(copy)[0]["policies"]["compaction"]
        assert ("llm", "llm") == (compaction["warm"], compaction["gist"])
        assert "{items}" not in compaction["gist_prompt"]
        source = [line for line in lines_of(run)[1:] if line["type"] == "CompactionTriggered"]
        masked = [line for line in lines_of(copy)[1:] if line["type"] == "CompactionTriggered"]
        for original, redacted in zip(source, masked, strict=True):
            assert original["event"]["gist_tokens"] == redacted["event"]["gist_tokens"]
            assert [i["tokens"] for i in original["event"]["warm"]] == [
                i["tokens"] for i in redacted["event"]["warm"]
            ]
        assert 0 == main(["check", str(copy)])


@pytest.mark.usefixtures("llm_env")
class TestCheck:
    def test_check_replays_the_recorded_answers_without_asking(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.salt = "would differ"
        capsys.readouterr()

        assert 0 == main(["check", str(run)])
        assert "re-decides to itself" in capsys.readouterr().out
        assert 3 == chat_server.requests

    @pytest.mark.parametrize("answer", [0, 1])
    def test_an_edited_answer_no_longer_re_decides(
        self,
        answer: int,
        tmp_path: Path,
        chat_server: ChatServer,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """The stand-in (answer 0) and the gist (answer 1 of the pushing compaction) must
        be what the policy makes of the recorded answers."""
        run = _record(tmp_path, chat_server)
        lines = lines_of(run)
        asking = [i for i, line in enumerate(lines) if line.get("event", {}).get("asked")]
        at = asking[answer]
        lines[at]["event"]["asked"][0]["output"] = "[test-model] $999.00"
        write_lines(run, rechained(lines))
        capsys.readouterr()

        assert 1 == main(["check", str(run)])
        out = capsys.readouterr().out
        assert f"event {lines[at]['at']}: re-decide:" in out
        assert "$999.00" in out

    def test_live_reports_each_changed_answer_as_a_finding(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.salt = "today"
        capsys.readouterr()

        assert 1 == main(["check", str(run), "--live", "--trust"])
        findings = capsys.readouterr().out.splitlines()
        assert 3 == len(findings)
        assert all(": live: " in line and "today" in line for line in findings)
        assert 6 == chat_server.requests

    def test_live_with_the_same_answers_passes(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        capsys.readouterr()

        assert 0 == main(["check", str(run), "--live", "--trust"])
        assert "the model gives the 3 recorded answers again" in capsys.readouterr().out


@pytest.mark.usefixtures("llm_env")
class TestFailures:
    @pytest.mark.parametrize(("choice", "step"), [("warm", 6), ("gist", 6)])
    def test_a_failing_server_is_one_line_and_nothing_is_written(
        self,
        choice: str,
        step: int,
        tmp_path: Path,
        chat_server: ChatServer,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        path = tiered(tmp_path / "t.toml", chat_server.url, compaction=f'{choice} = "llm"')
        out = tmp_path / "t.jsonl"
        out.write_bytes(b"what was here before\n")
        chat_server.fail(500, times=10)

        assert 2 == main(["run", str(path), "--out", str(out)])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert err.startswith(
            f"memtape: error: {path}: step {step}: the model server {chat_server.url} "
            "answered 500 Internal Server Error"
        )
        assert SECRET_KEY not in err
        assert b"what was here before\n" == out.read_bytes()


@pytest.mark.usefixtures("llm_env")
class TestBench:
    def test_a_tiered_llm_cell_fills_the_model_columns_and_a_second_bench_asks_nothing(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "bench.json"
        bench = [
            "bench",
            "refund-desk",
            "--policy",
            "tiered:warm=llm,gist=llm",
            "--policy",
            "tiered",
            "--set",
            f"llm.model={MODEL}",
            "--set",
            f"llm.base_url={chat_server.url}",
            "--json",
            str(out),
        ]
        capsys.readouterr()
        assert 0 == main(bench)
        table = capsys.readouterr().out
        asked, plain = json.loads(out.read_text("utf-8"))["results"]
        usage = ("llm_calls", "llm_cache_hits", "llm_prompt_tokens", "llm_completion_tokens")
        assert chat_server.requests == asked["metrics"]["llm_calls"] > 0
        assert 0 == asked["metrics"]["llm_cache_hits"]
        assert asked["metrics"]["llm_prompt_tokens"] > 0 < asked["metrics"]["llm_completion_tokens"]
        assert asked["metrics"]["llm_seconds"] > 0
        assert [0] * 4 == [plain["metrics"][name] for name in usage]
        assert "llm calls" in table
        assert "warm=llm" in table
        assert "warm_prompt" not in table

        assert 0 == main(bench)
        again = json.loads(out.read_text("utf-8"))["results"][0]["metrics"]
        assert asked["metrics"]["llm_calls"] == chat_server.requests == again["llm_cache_hits"]


@pytest.mark.usefixtures("llm_env")
def test_the_kit_runs_on_tiered_with_a_model(tmp_path: Path, chat_server: ChatServer) -> None:
    """Each decision decided twice gets the first one's answers, and every promise holds."""
    table = {"model": "kit", "base_url": chat_server.url, "max_retries": 0}
    params = {"warm": "llm", "gist": "llm", "warm_tokens": 2, "gist_tokens": 2}
    found = tmp_path / "found"

    run_state_machine_as_test(
        machine_for("tiered", found, params=params, llm=table), settings=PASSING
    )
    assert not found.exists()
    assert chat_server.requests > 0
