"""Importing the transcripts agents write into scenario files.

One module per format reads a file into a ``Transcript`` (turns with their
tool calls and results, the compactions it recorded, notes of what it left
out): ``openai_chat``, ``openai_responses``, ``anthropic``, ``claude_code``,
``langchain``, ``codex``, ``gemini_cli``, ``swe_agent`` and ``mini_swe_agent``, each saying its
mapping in its docstring. ``detect`` tells a file's format from its content
(``wrappers`` finds the records a document wraps); ``scenario`` writes a
transcript as a scenario file. Nothing is lost silently: every message, block and item
imports, or the import is refused naming the place (``FILE:LINE``, or an
item's index) and the part, and nothing is written. Each import keeps a
ledger (``ledger``): what came in, what went out, what was left out by
kind; a call or result that came in and did not go out refuses the import.

``read_transcript`` returns the turns as data before any scenario text is
written, so that what reads them (planting probes, say) can come between
it and ``transcript_scenario``.
"""

from collections.abc import Callable, Sequence
from pathlib import Path

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.values import MAX_TOKENS
from memtape.lab.choices import DEFAULT_BUDGET, DEFAULT_HOT_N
from memtape.lab.importers import (
    anthropic,
    capture,
    claude_code,
    codex,
    gemini_cli,
    langchain,
    mini_swe_agent,
    openai_chat,
    openai_responses,
    otel,
    swe_agent,
)
from memtape.lab.importers.capture import Thread
from memtape.lab.importers.detect import detect
from memtape.lab.importers.ledger import Ledger
from memtape.lab.importers.observations import PAIRED, check_mode
from memtape.lab.importers.records import Source, read_source
from memtape.lab.importers.scenario import (
    DEFAULT_SALIENT,
    check_pin,
    pinned,
    salient_roles,
    transcript_scenario,
)
from memtape.lab.importers.tokens import (
    RECORDED,
    Comparison,
    compare,
    default_tokenizer,
    measured_by,
    recorded_budget,
    recorded_counts,
    warn_if_code_heavy,
)
from memtape.lab.importers.transcript import Compaction, Transcript, Turn
from memtape.lab.importers.wrappers import unwrapped
from memtape.lab.probes import planted
from memtape.lab.scenario_file import MAX_COUNT, check_count, check_tokenizer
from memtape.policies.text.tokenizers import tokenizer_named

READERS: dict[str, Callable[[Source], Transcript]] = {
    openai_chat.FORMAT: openai_chat.read,
    openai_responses.FORMAT: openai_responses.read,
    anthropic.FORMAT: anthropic.read,
    claude_code.FORMAT: claude_code.read,
    langchain.FORMAT: langchain.read,
    otel.FORMAT: otel.read,
    codex.FORMAT: codex.read,
    gemini_cli.FORMAT: gemini_cli.read,
    swe_agent.FORMAT: swe_agent.read,
    mini_swe_agent.FORMAT: mini_swe_agent.read,
    capture.FORMAT: capture.read,
}
"""Each format's reader, by the name ``--format`` gives it."""

FORMATS = ("auto", *READERS)
"""What ``--format`` takes: ``auto`` (told from the content) or a format's name."""

__all__ = [
    "DEFAULT_SALIENT",
    "FORMATS",
    "READERS",
    "Compaction",
    "Ledger",
    "Thread",
    "Transcript",
    "Turn",
    "import_transcript",
    "read_transcript",
    "salient_roles",
    "transcript_scenario",
]


OBSERVING: dict[str, Callable[..., Transcript]] = {
    openai_chat.FORMAT: openai_chat.read,
    swe_agent.FORMAT: swe_agent.read,
    mini_swe_agent.FORMAT: mini_swe_agent.read,
}
"""The readers of chat messages, which take ``--observations``
(``memtape.lab.importers.observations``)."""


def read_transcript(
    path: Path,
    format: str = "auto",
    *,
    sidechains: bool = False,
    skip_bad_lines: bool = False,
    observations: str = "auto",
    key: str | None = None,
    thread: str | None = None,
    threads: Callable[[Sequence[Thread]], None] | None = None,
) -> Transcript:
    """The transcript in the file at ``path``, in ``format`` (``auto``: told from the content).

    ``sidechains`` (Claude Code only) imports the sidechains' entries too;
    ``skip_bad_lines`` skips a malformed line of a JSONL file rather than
    refusing the file (each one is named in the ledger); ``observations`` is
    how a user message after an action reads (``memtape.lab.importers.
    observations``: for the formats of chat messages); ``key`` (``--path``)
    names where a JSON document keeps its records (``memtape.lab.importers.
    wrappers``). ``thread`` (``--thread``) names the thread of a capture to import (its
    number or key; the longest by default), and ``threads`` hears the capture's threads
    (``memtape.lab.importers.capture``).
    """
    _check_format(format, sidechains)
    check_mode(observations)
    if thread is not None and format not in ("auto", capture.FORMAT):
        raise BadInput(f"--thread is for capture files, not {format}")
    source = unwrapped(read_source(path, skip_bad_lines=skip_bad_lines), key)
    told = detect(source) if format == "auto" else format
    if sidechains and told != claude_code.FORMAT:
        raise BadInput(f"{path}: --sidechains is for claude-code sessions, and this is {told}")
    if thread is not None and told != capture.FORMAT:
        raise BadInput(f"{path}: --thread is for capture files, and this is {told}")
    if told == capture.FORMAT:
        return capture.read(source, thread=thread, listed=threads)
    if told == claude_code.FORMAT:
        return claude_code.read(source, sidechains=sidechains)
    if told in OBSERVING:
        return OBSERVING[told](source, observations=observations)
    if observations == PAIRED:
        *others, last = OBSERVING
        formats = f"{', '.join(others)} and {last}"
        raise BadInput(f"{path}: --observations {PAIRED} is for {formats} files; this is {told}")
    return READERS[told](source)


def import_transcript(
    path: Path,
    *,
    format: str = "auto",
    salient: str | None = None,
    pin: str = "none",
    budget: int | None = None,
    hot_n: int = DEFAULT_HOT_N,
    tokenizer: str | None = None,
    sidechains: bool = False,
    probes: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    skip_bad_lines: bool = False,
    ledger: Callable[[Ledger], None] | None = None,
    told: Callable[[str], None] | None = None,
    compared: Callable[[Comparison], None] | None = None,
    observations: str = "auto",
    key: str | None = None,
    thread: str | None = None,
    threads: Callable[[Sequence[Thread]], None] | None = None,
) -> str:
    """The scenario file's text for the transcript at ``path``.

    Every option is checked before the file is read; see ``read_transcript``
    and ``transcript_scenario`` for what each does. ``probes`` is ``--probes``:
    None plants none, ``auto`` plants them by the rule of ``memtape.lab.probes``,
    anything else names a probes file (checked against the turns). ``progress``:
    see ``transcript_scenario``. ``ledger``, when given, hears the import's
    ledger once the file is read (the scenario's ``[import]`` table holds it too);
    ``told``, each recorded compaction beside memtape's count (``transcript_scenario``).

    ``tokenizer`` None is ``default_tokenizer()`` (``o200k_base`` with the ``bpe``
    extra, else ``words`` and a warning); ``words`` asked for on a code-heavy
    session warns too (``memtape.lab.importers.tokens``). ``recorded`` measures each
    turn by the provider's counts (a turn they do not cover by the default tokenizer),
    and refuses a transcript that recorded none. ``compared``, when given,
    hears memtape's count of the turns beside the provider's, when the transcript
    recorded its usage.

    ``budget`` None is the largest prompt the transcript's usage recorded, rounded
    down (``recorded_budget``; ``told`` hears which), or
    ``DEFAULT_BUDGET`` when it recorded none.
    """
    _check_format(format, sidechains)
    check_mode(observations)
    salient_roles(DEFAULT_SALIENT if salient is None else salient)
    check_pin(pin)
    if budget is not None:
        check_count(budget, "--budget")
    check_count(hot_n, "--hot-n", minimum=0)
    if tokenizer is not None and tokenizer != RECORDED:
        check_tokenizer(tokenizer)
    transcript = read_transcript(
        path,
        format,
        sidechains=sidechains,
        skip_bad_lines=skip_bad_lines,
        observations=observations,
        key=key,
        thread=thread,
        threads=threads,
    )
    counts: list[int | None] | None = None
    if tokenizer == RECORDED:
        tokenizer = default_tokenizer()
        counts = recorded_counts(
            transcript.turns, transcript.compactions, tokenizer_named(tokenizer)
        )
        if all(count is None for count in counts):
            raise BadInput(
                f"{path}: --tokenizer {RECORDED}: the transcript recorded no token counts of "
                "the provider's (usage) to measure its turns by"
            )
        past = next(
            ((n, c) for n, c in enumerate(counts, start=1) if c is not None and c > MAX_TOKENS),
            None,
        )
        if past is not None:
            raise BadInput(
                f"{path}: --tokenizer {RECORDED}: turn {past[0]} costs {past[1]:,} tokens by "
                f"the provider's counts, past the most a turn may cost ({MAX_TOKENS:,})"
            )
    if ledger is not None and transcript.ledger is not None:
        ledger(transcript.ledger)
    if tokenizer is None:
        tokenizer = default_tokenizer()
    elif counts is None:
        warn_if_code_heavy(str(path), tokenizer, [turn.text for turn in transcript.turns])
    said: list[str] = []
    if budget is None:
        chosen = recorded_budget(transcript.turns)
        if chosen is not None and chosen.budget > MAX_COUNT:
            raise BadInput(
                f"{path}: the largest prompt the provider's usage recorded ({chosen.peak:,} "
                f"tokens) is past the largest budget ({MAX_COUNT:,}): give --budget"
            )
        budget = DEFAULT_BUDGET if chosen is None else chosen.budget
        said += [] if chosen is None else [chosen.line()]
    if counts is not None:
        said.append(measured_by(counts, tokenizer))
    if compared is not None:
        comparison = compare(transcript.turns, transcript.compactions, tokenizer_named(tokenizer))
        if comparison is not None:
            compared(comparison)
    turns = [
        AddTurn(turn.role, turn.text, pin=pinned(pin, turn.role, number))
        for number, turn in enumerate(transcript.turns, start=1)
    ]
    tables = planted(probes, turns)
    return transcript_scenario(
        transcript,
        path,
        salient=salient,
        pin=pin,
        budget=budget,
        hot_n=hot_n,
        tokenizer=tokenizer,
        probes=tables,
        progress=progress,
        told=told,
        tokens=counts,
        said=said,
    )


def _check_format(format: str, sidechains: bool) -> None:
    if format not in FORMATS:
        raise BadInput(f"--format {format!r}: write one of {', '.join(FORMATS)}")
    if sidechains and format not in ("auto", claude_code.FORMAT):
        raise BadInput(f"--sidechains is for claude-code sessions, not {format}")
