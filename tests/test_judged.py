"""memtape.policies.store.judged: supersession judged by a model (ADD, UPDATE, DELETE, NOOP)."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import contextlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.checking.invariants import StepChecker, check_run
from memtape.cli import main
from memtape.core.commands import WriteFact
from memtape.core.errors import BadInput, CorruptLog, Rejected
from memtape.core.events import Event, FactWritten, Judged, ModelCall, Superseded
from memtape.core.state import INITIAL_STATE
from memtape.llm.answers import Question, answering
from memtape.llm.config import ModelConfig
from memtape.llm.usable import Refused
from memtape.policies.plumbing.promises import JUDGED, SUPERSEDES
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.store.judged import Judge, candidates, judgement
from memtape.reducers import fold
from memtape.runs.files import load_run
from memtape.viewer.payload import run_payload
from tests.chained import lines_of
from tests.llm_server import ChatServer

STEPS = """
[[step]]
write = "pet"
importance = 0.5
text = "A dog named Rex."

[[step]]
write = "city"
importance = 0.5
text = "Lives in Lyon."

[[step]]
write = "pet"
importance = 0.5
text = "The dog is named Max now."

[[step]]
write = "home"
importance = 0.5
text = "No longer lives in Lyon."

[[step]]
write = "pet"
importance = 0.5
text = "Has a dog named Max."

[[step]]
write = "food"
importance = 0.5
text = "Likes ramen."
"""
"""Six writes: the third updates the first, the fourth deletes the second, the fifth is
nothing new, the last shares no word with a stored fact and is added unasked."""


def judge_by_text(model: str, prompt: str) -> str:
    """A model that reads the new fact: one that ends in "now." updates, "no longer"
    deletes, "has a dog" (said before) is nothing new, anything else is added; it names
    the first candidate. ``examples/judged-facts.jsonl`` was recorded with it."""
    new = re.search(r"^New fact: (.*)$", prompt, re.MULTILINE)
    first = re.search(r"^\[(\d+)\]", prompt, re.MULTILINE)
    assert new is not None
    assert first is not None
    said, target = new.group(1).lower(), int(first.group(1))
    if said.endswith(" now."):
        return json.dumps({"decision": "UPDATE", "fact": target})
    if "no longer" in said:
        return json.dumps({"decision": "DELETE", "fact": target})
    if "has a dog" in said:
        return json.dumps({"decision": "NOOP"})
    return json.dumps({"decision": "ADD"})


def scenario(path: Path, url: str, *, retries: int = 0, steps: str = STEPS) -> Path:
    """The judged-facts scenario at ``path``, its model at ``url``."""
    path.write_text(
        f"""[scenario]
name = "judged"

[llm]
model = "judge"
base_url = "{url}"
max_retries = {retries}
timeout = 5

[forgetting]
policy = "importance-recency-access"
capacity = 10
supersession = "llm"
candidates = 2
{steps}""",
        "utf-8",
    )
    return path


def _events(out: Path) -> list[Event]:
    return list(load_run(out).session.run.events)


CALL = ModelCall('{"decision": "ADD"}', "judge", "h", 1, 1, 0.0, False)


class TestContract:
    @pytest.mark.parametrize(
        ("output", "expected"),
        [
            ('{"decision": "ADD"}', ("ADD", 0)),
            ('{"decision": "noop", "fact": 9}', ("NOOP", 0)),
            ('{"decision": "UPDATE", "fact": 2}', ("UPDATE", 2)),
            ('```json\n{"decision": "DELETE", "fact": 3}\n```', ("DELETE", 3)),
        ],
    )
    def test_a_judgement_is_read_from_the_json(
        self, output: str, expected: tuple[str, int]
    ) -> None:
        assert expected == judgement(output, (2, 3))

    @pytest.mark.parametrize(
        ("output", "reason"),
        [
            ("update fact 2", "it is not JSON"),
            ("[]", "it is not a JSON object"),
            ('{"decision": "MERGE"}', "it decides 'MERGE', not one of ADD, UPDATE, DELETE, NOOP"),
            ('{"decision": "UPDATE", "fact": 7}', "names fact 7, which is not a candidate (2, 3)"),
            ('{"decision": "DELETE"}', "names fact None, which is not a candidate"),
        ],
    )
    def test_an_answer_that_names_no_candidate_is_refused_with_why(
        self, output: str, reason: str
    ) -> None:
        with pytest.raises(Refused, match=re.escape(reason)):
            judgement(output, (2, 3))


class TestCandidates:
    def test_the_most_alike_active_facts_come_first_and_unlike_ones_never(self) -> None:
        state = fold(
            [
                FactWritten(1, "pet", "a dog named Rex", 0.5),
                FactWritten(2, "city", "lives in Lyon", 0.5),
                FactWritten(3, "pet.name", "the dog is Rex", 0.5),
            ]
        )
        found = candidates(state.store, WriteFact("pet", "dog named Max", 0.5), 5)

        assert [1, 3] == [fact.id for fact in found]


class TestPolicy:
    def test_a_judged_store_promises_judged_writes_not_supersession_by_key(self) -> None:
        policy = ImportanceRecencyAccess(4, 4.0, 0.1, "llm", judge=Judge(ModelConfig("m")))

        assert JUDGED in policy.promises
        assert SUPERSEDES not in policy.promises
        assert "candidates" in policy.params()

    def test_llm_without_a_judge_is_refused(self) -> None:
        with pytest.raises(BadInput, match='supersession "llm"'):
            ImportanceRecencyAccess(4, 4.0, 0.1, "llm")


class TestFold:
    def test_a_delete_retires_its_target_without_a_successor(self) -> None:
        state = fold([FactWritten(1, "pet", "a dog", 0.5), Judged("pet", "DELETE", (1,), 1)])

        assert "retired" == state.store.facts[1].status
        assert not state.store.active

    def test_an_update_naming_no_active_fact_does_not_fold(self) -> None:
        with pytest.raises(CorruptLog, match="fact 4 is not active"):
            fold([FactWritten(1, "pet", "a dog", 0.5), Judged("pet", "UPDATE", (1,), 4)])

    def test_an_unknown_decision_does_not_fold(self) -> None:
        with pytest.raises(CorruptLog, match="'MERGE'"):
            fold([Judged("pet", "MERGE", ())])


class TestKitPromise:
    def _check(self, events: list[Event]) -> list[str]:
        policy = ImportanceRecencyAccess(4, 4.0, 0.1, "llm", judge=Judge(ModelConfig("m")))
        checker = StepChecker(INITIAL_STATE)
        written = [FactWritten(1, "pet", "a dog", 0.5), FactWritten(2, "city", "Lyon", 0.5)]
        checker.check(Policies(None, policy, None), written, start=0)
        return [v.invariant for v in checker.check(Policies(None, policy, None), events, start=2)]

    def test_an_update_of_a_fact_not_among_the_candidates_breaks_judged(self) -> None:
        events: list[Event] = [
            Judged("pet", "UPDATE", (1,), 2, (CALL,)),
            FactWritten(3, "pet", "a cat", 0.5),
            Superseded(2, 3),
        ]

        assert [JUDGED, JUDGED] == self._check(events)

    def test_a_delete_of_a_fact_not_among_the_candidates_breaks_judged(self) -> None:
        assert [JUDGED] == self._check([Judged("pet", "DELETE", (1,), 2, (CALL,))])

    def test_an_update_of_a_candidate_keeps_judged(self) -> None:
        events: list[Event] = [
            Judged("pet", "UPDATE", (1,), 1, (CALL,)),
            FactWritten(3, "pet", "a cat", 0.5),
            Superseded(1, 3),
        ]

        assert [] == self._check(events)


@pytest.mark.usefixtures("llm_env")
class TestThroughTheSdk:
    def test_each_write_is_judged_and_recorded(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = judge_by_text
        out = tmp_path / "judged.jsonl"

        assert 0 == main(
            ["run", str(scenario(tmp_path / "j.toml", chat_server.url)), "--out", str(out)]
        )
        events = _events(out)
        judged = [(e.decision, e.target, e.candidates) for e in events if isinstance(e, Judged)]
        assert [
            ("ADD", 0, ()),
            ("ADD", 0, ()),
            ("UPDATE", 1, (1,)),
            ("DELETE", 2, (2,)),
            ("NOOP", 0, (3,)),
            ("ADD", 0, ()),
        ] == judged
        assert 3 == chat_server.requests
        state = load_run(out).session.run.state_at(len(events))
        assert ["pet", "food"] == [state.store.facts[i].key for i in state.store.active]
        assert {"type": "json_object"} == chat_server.bodies[0]["response_format"]
        assert "[1] pet: A dog named Rex." in (chat_server.bodies[0]["messages"][0]["content"])

    def test_the_run_checks_and_explains_with_the_server_gone(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.answerer = judge_by_text
        out = tmp_path / "judged.jsonl"
        assert 0 == main(
            ["run", str(scenario(tmp_path / "j.toml", chat_server.url)), "--out", str(out)]
        )
        chat_server.stop()
        capsys.readouterr()

        assert 0 == main(["check", str(out)])
        assert "re-decides to itself" in capsys.readouterr().out
        assert 0 == main(["timeline", str(out)])
        assert "judged UPDATE fact 1 ('pet'), candidates 1; asked judge" in capsys.readouterr().out

    def test_an_answer_naming_no_candidate_rejects_the_write_and_writes_nothing(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.answerer = lambda model, prompt: '{"decision": "UPDATE", "fact": 99}'
        out = tmp_path / "judged.jsonl"
        out.write_bytes(b"before\n")
        path = scenario(tmp_path / "j.toml", chat_server.url, retries=1)

        assert 2 == main(["run", str(path), "--out", str(out)])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert (
            "step 3: model 'judge' gave no usable judgement of the write to 'pet' in "
            "2 tries: the last answer was refused: its UPDATE names fact 99, which is not a "
            "candidate (1)"
        ) in err
        assert 2 == chat_server.requests
        assert b"before\n" == out.read_bytes()

    def test_the_judged_line_carries_its_calls(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        chat_server.answerer = judge_by_text
        out = tmp_path / "judged.jsonl"
        assert 0 == main(
            ["run", str(scenario(tmp_path / "j.toml", chat_server.url)), "--out", str(out)]
        )

        lines = [line for line in lines_of(out)[1:] if line["type"] == "Judged"]
        assert 1 == lines[0]["v"]
        assert ["key", "decision", "candidates"] == list(lines[0]["event"])
        assert ["key", "decision", "candidates", "target", "asked"] == list(lines[2]["event"])

    def test_supersession_llm_without_a_model_is_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "j.toml"
        text = scenario(path, "http://127.0.0.1:9/v1").read_text("utf-8")
        path.write_text(re.sub(r"\[llm\][^\[]*", "", text, count=1), "utf-8")

        assert 2 == main(["run", str(path), "--out", str(tmp_path / "o.jsonl")])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert 'supersession "llm" needs a model' in err


@pytest.mark.usefixtures("llm_env")
class TestRendering:
    @pytest.fixture
    def recorded(self, tmp_path: Path, chat_server: ChatServer) -> Path:
        """The six writes, judged and recorded; the server stopped."""
        chat_server.answerer = judge_by_text
        out = tmp_path / "judged.jsonl"
        path = scenario(tmp_path / "j.toml", chat_server.url)
        assert 0 == main(["run", str(path), "--out", str(out)])
        chat_server.stop()
        return out

    def test_why_shows_the_judgement_that_deleted_a_fact(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert 0 == main(["why", str(recorded), "fact:city"])
        lines = [line.strip() for line in capsys.readouterr().out.splitlines()]

        assert (
            "8  step    4  Judged              deleted at t=0: model judge judged the write on "
            "'home' a DELETE of it (candidates 2): retired, kept, never ranked"
        ) in lines
        assert "now retired (since t=0, deleted by a judged write)" == lines[-1]

    def test_why_shows_the_judgement_a_write_came_in_by(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert 0 == main(["why", str(recorded), "fact:pet"])
        lines = [line.strip() for line in capsys.readouterr().out.splitlines()]

        assert (
            "5  step    3  Judged              the write on 'pet' judged UPDATE by model judge, "
            "candidates 1"
        ) in lines
        assert (
            "9  step    5  Judged              a candidate of the write on 'pet', judged NOOP by "
            "model judge: left as it was"
        ) in lines

    def test_why_json_carries_the_decision_and_candidates(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert 0 == main(["why", str(recorded), "fact:city", "--json"])
        data = json.loads(capsys.readouterr().out)
        (subject,) = data["subjects"]
        judged = [step for step in subject["steps"] if step["type"] == "Judged"]

        assert "DELETE" == judged[-1]["numbers"]["decision"]
        assert [2] == judged[-1]["numbers"]["candidates"]

    def test_show_and_diff_say_a_deleted_fact_was_deleted(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert 0 == main(["show", str(recorded)])
        shown = capsys.readouterr().out
        assert 0 == main(["diff", str(recorded), "6", "9"])
        diffed = capsys.readouterr().out

        assert "  retired  2 'city': Lives in Lyon.  (deleted by a judged write at t=0)" in shown
        assert "fact 2 'city' retired: deleted by a judged write at t=0" in diffed

    def test_the_viewer_follows_a_judged_run(self, recorded: Path) -> None:
        session = load_run(recorded).session
        data = run_payload(session.run, session.policies_at, "judged")

        assert "Judged" in json.dumps(data)


EXAMPLES = Path(__file__).parent.parent / "examples"


def _judgements(events: list[Event]) -> list[tuple[str, str, tuple[int, ...], int, list[str]]]:
    return [
        (e.key, e.decision, e.candidates, e.target, [call.output for call in e.asked])
        for e in events
        if isinstance(e, Judged)
    ]


@pytest.mark.usefixtures("llm_env")
class TestExample:
    def test_the_shipped_run_is_the_example_judged_by_the_test_judge(
        self, tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        chat_server.answerer = judge_by_text
        monkeypatch.setenv("OPENAI_BASE_URL", chat_server.url)
        out = tmp_path / "again.jsonl"

        assert 0 == main(["run", str(EXAMPLES / "judged-facts.toml"), "--out", str(out)])
        shipped = _events(EXAMPLES / "judged-facts.jsonl")
        assert _judgements(shipped) == _judgements(_events(out))
        assert [type(e) for e in shipped] == [type(e) for e in _events(out)]


class Scripted:
    """A model that gives ``outputs`` in turn (any text, JSON or not), whatever is asked."""

    def __init__(self, outputs: list[str]) -> None:
        self.outputs = iter(outputs)

    def answer(self, question: Question) -> ModelCall:
        """The next scripted output, as a call to the question's model."""
        output = next(self.outputs, '{"decision": "ADD"}')
        return ModelCall(output, question.model, question.prompt, 1, 1, 0.0, False)


_DECISIONS = st.sampled_from(["ADD", "UPDATE", "DELETE", "NOOP", "MERGE", "update"])
_OUTPUTS = st.one_of(
    st.builds(
        lambda decision, fact: json.dumps({"decision": decision, "fact": fact}),
        _DECISIONS,
        st.integers(0, 12),
    ),
    st.text(max_size=8),
)
_WRITES = st.builds(
    WriteFact,
    st.sampled_from(["pet", "home", "plan"]),
    st.lists(st.sampled_from(["dog", "Rex", "Max", "Lyon", "Oslo", "pro", "no"]), max_size=4).map(
        " ".join
    ),
    st.just(0.5),
)


class TestAnyAnswer:
    @settings(max_examples=60, deadline=None)
    @given(writes=st.lists(_WRITES, min_size=1, max_size=12), outputs=st.lists(_OUTPUTS))
    def test_whatever_the_model_says_a_run_keeps_every_promise(
        self, writes: list[WriteFact], outputs: list[str]
    ) -> None:
        """Any answer, out-of-candidate targets and garbage included: each write is judged
        or rejected whole, and the run keeps JUDGED, CAPACITY and the rest."""
        config = ModelConfig("m", max_retries=1)
        policy = ImportanceRecencyAccess(3, 4.0, 0.1, "llm", judge=Judge(config, 2))
        policies = Policies(None, policy, None)
        session = Session(policies)
        with answering(Scripted(outputs)):
            for write in writes:
                with contextlib.suppress(Rejected):
                    session.execute(write)

        assert [] == check_run(session.run, policies)
