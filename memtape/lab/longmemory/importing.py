"""One item of a long-memory data set's file, read by its format's reader and written as a
scenario: the one place that knows every reader (each reader knows only ``sessions``)."""

from pathlib import Path

from memtape.core.errors import BadInput
from memtape.lab.choices import DEFAULT_BUDGET, DEFAULT_HOT_N
from memtape.lab.importers.tokens import RECORDED, default_tokenizer
from memtape.lab.longmemory import locomo, longmemeval
from memtape.lab.longmemory.sessions import BENCHMARKS, LOCOMO, LONGMEMEVAL, benchmark_scenario
from memtape.lab.scenario_file import check_tokenizer
from memtape.policies.text.tokenizers import TOKENIZERS


def import_benchmark(
    path: Path,
    format: str,
    *,
    item: str | None = None,
    budget: int | None = None,
    hot_n: int = DEFAULT_HOT_N,
    tokenizer: str | None = None,
) -> str:
    """The scenario file's text for one item of the data set file at ``path``: a LongMemEval
    question (``item`` its ``question_id``) or a LoCoMo conversation (``item`` its
    ``sample_id`` or its place, from 1)."""
    if tokenizer == RECORDED:
        *others, last = sorted(TOKENIZERS)
        raise BadInput(
            f"{path}: --tokenizer {RECORDED}: a {format} file records no token counts to "
            f"measure its turns by (choose {', '.join(others)} or {last})"
        )
    if tokenizer is not None:
        check_tokenizer(tokenizer)
    readers = {LONGMEMEVAL: longmemeval.read, LOCOMO: locomo.read}
    if format not in readers:
        raise BadInput(f"--format {format!r}: write one of {', '.join(BENCHMARKS)}")
    benchmark = readers[format](path, item)
    return benchmark_scenario(
        benchmark,
        path,
        format,
        budget=DEFAULT_BUDGET if budget is None else budget,
        hot_n=hot_n,
        tokenizer=default_tokenizer() if tokenizer is None else tokenizer,
    )
