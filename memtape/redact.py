"""Redacting a run: a copy whose free texts are placeholders and whose figures are the same.

A redacted copy can go into a bug report without the user's data. Every
free text (turn texts and tool call ids, WARM items, fact keys and texts,
query texts and the keys they expect, episodes, distilled facts and rules, the consolidation
rules and every other string of the header) becomes a placeholder of as
many tokens under the run's tokenizer, so every figure (meters, scores,
decisions, WARM tokens) stays as it was. What is not free text stays: a
turn's role (one of the closed set ``ROLES``, which the policy measures as
part of the turn and routes on; a log holding any other role is refused),
the names of the policies, their rules (``supersession``, ``relevance``)
and the tokenizer, and a COLD gist that is exactly the tiered policy's count
template (``gist_for``), which the gist invariant checks word for word.

Under the word count a placeholder is ``TAG.1 TAG.2 ... TAG.n``, one word
per token, where TAG comes from a keyed hash of the original text. Under a
byte-pair encoding (or any other tokenizer) it is a head followed by words
drawn by the keyed hash from a pool of short lowercase words that are each
one token, alone and after a space, under every tokenizer that measured the
run; the head is a word, a number or a piece that splits as the text's
start does (failing those, another symbol or pair of symbols that does;
failing those too, a later head: a long word, an accented, Cyrillic or
Greek syllable, control bytes or punctuation that does, and last a word of
the encodings' own vocabularies; never the text itself), so that the
placeholder keeps both the text's count and the count of the text after a
space (which is what a turn's ``"{role}: {text}"`` adds). A text such as
``dép`` needs a later head: it is three tokens alone but one after a space,
and no short letters do that; ``disproportionate`` (four cl100k_base tokens
alone, one after a space) needs a word of the vocabulary that does the same.

Under one tokenizer every text gets a placeholder but where the heads of
its shape run out: a text that is only a head, with no room for words (its
count after a space is the head's), has only as many placeholders as its
shape has heads other than itself. Under cl100k_base the one-word texts of
five tokens alone and one after a space are exactly its three heads of that
shape, ``bureaucracy``, ``bureaucratic`` and ``développement``: once two of
them hold each other's head the third is refused. No other text was found
refused under one encoding (every token of either vocabulary that is a
space and a piece of three or more tokens alone was tried as the piece). Such a text is
refused in one line, never given a placeholder of another count.

When two tokenizers measured the run (a fork onto another one),
words one token longer under one of them, or a glued head such as
``ab1cd`` (one word, three byte-pair tokens), make up the difference, and
a head must have the text's shape under both: a text whose first word the
encodings split differently and no head repeats is refused
(``développement``: five cl100k_base tokens alone, two o200k_base ones, one
after a space under each; ``bureaucracy``, five and three).
Either way equal texts get equal placeholders, so a fact superseded
by key is still superseded by key, and different texts get different ones.
The key is by default a digest of the whole run, so the copy is
deterministic, yet a reader cannot test a guess of one short text (a key
such as ``"name"``) by hashing it; pass the same ``secret`` to redact
several runs with agreeing placeholders.

The copy's header carries ``"redacted": true``: its rules are placeholders
too, so its commands cannot be decided again (``memtape check`` says so).
"""

import functools
import hashlib
import hmac
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, assert_never

import attrs

from memtape.core.chain import HEAD, SIGNATURE
from memtape.core.codec import command_data, event_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
    role_error,
)
from memtape.core.errors import BadInput, CorruptLog
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    ModelCall,
    ProceduralRule,
    Queried,
    SemanticFact,
    Superseded,
    TurnAdded,
    WarmItem,
)
from memtape.core.logfile import RecordedBatch, RunFile, write_run
from memtape.core.paths import same_file
from memtape.core.run import Run
from memtape.llm.asking import PROMPT_HASH_HEX
from memtape.policies.compaction import gist_for
from memtape.policies.session import Policies
from memtape.policies.tokenizers import SpacedWords, Tokenizer, WordCount
from memtape.reducers import fold
from memtape.runfiles import epochs_from_header
from memtape.storage import read_address

REDACTED = "redacted"
"""The header entry (``true``) that marks a redacted run."""

_WRITER_OWNED = frozenset({"memtape", "format", "version", "events", "steps", HEAD, SIGNATURE})
"""Header entries ``write_run`` writes itself (the copy is chained afresh)."""

_NAMES = frozenset({"policy", "tokenizer", "summarizer", "supersession", "relevance", "model"})
"""Header entries whose strings name a policy, a tokenizer, a summarizer, a rule of one
or the model asked, kept so the copy loads."""

_UNKNOWN_PROMPT = "0" * PROMPT_HASH_HEX
"""The prompt hash of a model call in a redacted copy: the real one is not kept."""

_TAG_LENGTHS = range(8, 65, 4)
"""How many hex digits of the hash a tag takes: the fewest no other text holds."""

_ATTEMPTS = 4096
"""How many candidates a text's placeholder may try before the run is refused."""

Shape = tuple[tuple[int, int], ...]
"""A text's counts under each tokenizer of a run: alone, and after a space."""

Pools = tuple[tuple[str, tuple[str, ...]], ...]
"""The pieces of a placeholder: for each, what joins it to the one before and what it is
drawn from."""


@attrs.frozen
class RedactedRun:
    """A redacted run and the header to write it with.

    ``torn`` describes a torn tail of the source (an unfinished last
    command), which the copy leaves out, or is None.
    """

    header: dict[str, Any]
    run: Run
    torn: str | None = None

    def write(self, path: Path) -> None:
        """Write the copy to ``path`` atomically (``write_run``)."""
        write_run(path, self.header, self.run)


def redact(source: Path, *, secret: bytes | None = None) -> RedactedRun:
    """The redacted copy of the run file at ``source``, in memory; the file is only read.

    Raises ``BadInput`` naming the file when it is not a readable run, its
    events do not fold, or a placeholder cannot keep a text's token count
    under the run's tokenizer.
    """
    recorded = read_address(str(source))
    header = recorded.header
    try:
        tokenizers = _tokenizers(header)
        masks = Masks(secret or _digest(recorded), tokenizers)
        copy = {
            name: _scrub(value, masks)
            for name, value in header.items()
            if name not in _WRITER_OWNED
        }
        copy[REDACTED] = True
        _tokenizers(copy)  # the copy's header must load as the source's does
        run = Run(fold)
        cold = 0
        for batch in recorded.batches:
            _closed_roles(batch)
            events: list[Event] = []
            for event in batch.events:
                if isinstance(event, CompactionTriggered):
                    cold += event.cold
                events.append(_event(event, masks, cold))
            _append(run, _command(batch.command, masks), events, batch)
    except BadInput as error:
        problem = str(error).removeprefix(f"{source}: ")
        raise BadInput(f"{source}: cannot redact it: {problem}") from None
    return RedactedRun(copy, run, recorded.torn)


def export_redacted(source: Path, out: Path, *, secret: bytes | None = None) -> RedactedRun:
    """Write the redacted copy of the run at ``source`` to ``out``; the source is not changed.

    This is ``memtape export RUN --redact --out COPY``. ``out`` must not be
    the source itself; the write is atomic, so a failure leaves ``out`` as
    it was.
    """
    if same_file(source, out):
        raise BadInput(f"{out}: is the run being redacted; write the copy to another file")
    redacted = redact(source, secret=secret)
    redacted.write(out)
    return redacted


class Masks:
    """The placeholder of each text, made once, injective, and of the same token count.

    ``secret`` keys the hash that picks placeholders; ``tokenizers`` are
    every tokenizer that measured the run. Under the word count alone the
    placeholders are ``TAG.n`` words; under any other tokenizers they are
    drawn from verified one-token words (see the module docstring).
    """

    def __init__(self, secret: bytes, tokenizers: tuple[Tokenizer, ...]) -> None:
        self._secret = secret
        self._tokenizers = tokenizers
        self._words = all(isinstance(tokenizer, WordCount) for tokenizer in tokenizers)
        self._made: dict[str, str] = {}
        self._tags: set[str] = set()
        self._taken: set[str] = set()
        self._calls: dict[str, str] = {}

    def calls(self, ids: tuple[str, ...]) -> tuple[str, ...]:
        """Tool call ids as ``call.N``, numbered in the order the run first names them: an
        id is no figure (no token count keeps it), and the same id is the same placeholder
        wherever it appears, so a call still pairs with its results."""
        return tuple(self._calls.setdefault(i, f"call.{len(self._calls) + 1}") for i in ids)

    def text(self, text: str) -> str:
        """The placeholder of ``text``: as many tokens, the same one wherever ``text`` appears."""
        made = self._made.get(text)
        if made is not None:
            return made
        made = self._tagged(text) if self._words else self._drawn(text)
        self._made[text] = made
        return made

    def _tagged(self, text: str) -> str:
        """``TAG.1 ... TAG.n``: one word per word of ``text`` (runs measured by word count)."""
        raw = text.encode("utf-8", "surrogatepass")
        digest = hmac.new(self._secret, raw, hashlib.sha256).hexdigest()
        tag = next(digest[:n] for n in _TAG_LENGTHS if digest[:n] not in self._tags)
        self._tags.add(tag)
        words = self._tokenizers[0].count(text)
        made = " ".join(f"{tag}.{word}" for word in range(1, words + 1))
        for tokenizer in self._tokenizers:
            if tokenizer.count(made) != tokenizer.count(text):
                raise BadInput(
                    f"no placeholder keeps the token count of a text under the "
                    f"{tokenizer.name!r} tokenizer"
                )
        return made

    def _drawn(self, text: str) -> str:
        """A head and pool words with the shape of ``text``, the first free one the hash picks.

        The heads of short letters, digits and symbols are tried first, then
        the later heads one group of ``_LATER`` at a time, each group found
        only when the ones before it give no placeholder: a text that had a
        placeholder without them keeps it, and the search is paid only by a
        run that needs it.
        """
        if not text:
            return ""
        shape = _shape(text, self._tokenizers)
        pieces = _pieces(self._tokenizers)
        made = self._first_free(text, shape, pieces.options(shape))
        for group in range(_LATER_GROUPS):
            if made is not None:
                break
            later = pieces.fitting(shape, _later_heads(self._tokenizers, group))
            made = self._first_free(text, shape, later)
        if made is None:
            names = " and ".join(repr(tokenizer.name) for tokenizer in self._tokenizers)
            plural = "s" if len(self._tokenizers) > 1 else ""
            raise BadInput(
                f"no placeholder keeps the token count of a text under the {names} "
                f"tokenizer{plural}"
            )
        self._taken.add(made)
        return made

    def _first_free(self, text: str, shape: Shape, options: Iterator[Pools]) -> str | None:
        """The first candidate of ``options`` of ``shape`` no other text holds, or None.

        The candidates of one head shape are numbered (head and words are
        the digits of the number), the hash picks a starting number, and a
        candidate some other text already holds, or whose pieces merge at a
        boundary, gives way to the next number.
        """
        raw = text.encode("utf-8", "surrogatepass")
        attempts = 0
        for pools in options:
            size = math.prod(len(pool) for _, pool in pools)
            start = self._number(raw, size.bit_length() + 64) % size
            for step in range(min(size, _ATTEMPTS - attempts)):
                made = _Pieces.placeholder(pools, (start + step) % size)
                # Never the text itself: a head of a rare shape may be the one symbol it is.
                if made == text or made in self._taken:
                    continue
                if _shape(made, self._tokenizers) == shape:
                    return made
            attempts += min(size, _ATTEMPTS - attempts)
        return None

    def _number(self, raw: bytes, bits: int) -> int:
        """A keyed hash of ``raw`` at least ``bits`` long, as a number."""
        blocks = (
            hmac.new(self._secret, block.to_bytes(4, "big") + raw, hashlib.sha256).digest()
            for block in range(bits // 256 + 1)
        )
        return int.from_bytes(b"".join(blocks), "big")

    def turn(self, role: str, text: str) -> str:
        """The placeholder of a turn's text, which also keeps the tokens of ``"{role}: {text}"``."""
        made = self.text(text)
        for tokenizer in self._tokenizers:
            if tokenizer.count(f"{role}: {made}") != tokenizer.count(f"{role}: {text}"):
                raise BadInput(
                    f"no placeholder keeps the token count of a {role} turn under the "
                    f"{tokenizer.name!r} tokenizer"
                )
        return made

    def optional(self, text: str | None) -> str | None:
        """The placeholder of ``text``, or None for None."""
        return None if text is None else self.text(text)


@attrs.frozen
class _Pieces:
    """What placeholders are built of under some tokenizers.

    ``words`` are each one token alone and after a space under every
    tokenizer; ``extra[i]`` are words one token after a space under every
    tokenizer but the i-th, where they are two (they make up the difference
    when the tokenizers of one run count a text differently); ``heads`` are
    the pieces a placeholder may start with, by their shape, and ``rare`` the
    ones of shapes no short letters or digits have (single symbols, tried
    after those; ``_later_heads`` come after them all); ``digits`` are
    one token each under every tokenizer, and ``splits[i]`` says whether the
    i-th tokenizer counts each word and digit of a glued ``ab1cd`` (a byte-pair
    encoding) or the whole as one (the word count).
    """

    words: tuple[str, ...]
    extra: tuple[tuple[str, ...], ...]
    heads: dict[Shape, tuple[str, ...]]
    rare: dict[Shape, tuple[str, ...]]
    digits: tuple[str, ...]
    splits: tuple[bool, ...]

    def options(self, shape: Shape) -> Iterator[Pools]:
        """The pieces a placeholder of ``shape`` may be made of, head first."""
        return self.fitting(shape, self._heads(shape))

    def fitting(self, shape: Shape, heads: Iterable[tuple[Shape, Pools]]) -> Iterator[Pools]:
        """The pieces of the placeholders of ``shape`` that start with one of ``heads``
        (each the shape of a head and the pools it is drawn from).

        A head fits when it leaves each tokenizer as many tokens for the
        words alone as after a space (each word follows a space), and the
        words can make them up: as many words as the fewest any tokenizer
        wants, one of them an extra word for each token more another wants.
        """
        if not self.words:
            return
        for head, pools in heads:
            left = [count - part for (count, _), (part, _) in zip(shape, head, strict=True)]
            if left != [spaced - part for (_, spaced), (_, part) in zip(shape, head, strict=True)]:
                continue
            length = min(left)
            more = [wanted - length for wanted in left]
            if length < 0 or sum(more) > length:
                continue
            if any(n and not pool for n, pool in zip(more, self.extra, strict=True)):
                continue
            extra = [
                (" ", pool) for n, pool in zip(more, self.extra, strict=True) for _ in range(n)
            ]
            yield (*pools, *extra, *([(" ", self.words)] * (length - sum(more))))

    def _heads(self, shape: Shape) -> Iterator[tuple[Shape, Pools]]:
        """The heads by shape, then the glued head a run measured by the word count and an
        encoding needs when the encoding counts many more tokens than words, then the rare
        heads (last, so that no text that had a placeholder without them changes)."""
        for head, heads in self.heads.items():
            yield head, (("", heads),)
        yield from self._glued(shape)
        for head, heads in self.rare.items():
            yield head, (("", heads),)

    def _glued(self, shape: Shape) -> Iterator[tuple[Shape, Pools]]:
        """The glued head, when the run was measured by the word count and an encoding."""
        if all(self.splits) or not any(self.splits) or not self.digits:
            return
        whole = {count for (count, _), split in zip(shape, self.splits, strict=True) if not split}
        parts = min(c for (c, _), split in zip(shape, self.splits, strict=True) if split)
        parts -= min(whole) - 1
        if parts > 1:
            glued = tuple((1, 1) if not split else (parts, parts) for split in self.splits)
            yield (
                glued,
                tuple(("", self.digits if part % 2 else self.words) for part in range(parts)),
            )

    @staticmethod
    def placeholder(pools: Pools, number: int) -> str:
        """The candidate called ``number``: one piece from each pool, the first piece first."""
        chosen = []
        for joint, pool in pools:
            number, piece = divmod(number, len(pool))
            chosen.append(joint + pool[piece])
        return "".join(chosen)


def _shape(text: str, tokenizers: tuple[Tokenizer, ...]) -> Shape:
    """The counts of ``text`` alone and after a space, under each tokenizer."""
    return tuple((t.count(text), t.count(f" {text}")) for t in tokenizers)


_RARE = (range(0xC0, 0x250), range(0x400, 0x460), range(0x4E00, 0x5000), range(0x1F300, 0x1F650))
"""Accented and Cyrillic letters, CJK ideographs and pictographs: single characters whose
shapes (a pictograph three tokens alone, two after a space, say) no short letters have."""


def _candidates() -> Iterator[str]:
    """Short strings to build placeholders of, in a fixed order: letters, then numbers."""
    for alphabet in ("abcdefghijklmnopqrstuvwxyz", "0123456789"):
        for size in (1, 2, 3):
            yield from map("".join, itertools.product(alphabet, repeat=size))


@functools.cache
def _pieces(tokenizers: tuple[Tokenizer, ...]) -> _Pieces:
    """The pool words and heads under ``tokenizers``, each verified by counting it."""
    one = tuple((1, 1) for _ in tokenizers)
    words: list[str] = []
    extra: list[list[str]] = [[] for _ in tokenizers]
    heads: dict[Shape, list[str]] = {}
    for candidate in _candidates():
        shape = _shape(candidate, tokenizers)
        heads.setdefault(shape, []).append(candidate)
        spaced = [after for _, after in shape]
        if not candidate.isalpha():
            continue
        if shape == one:
            words.append(candidate)
        elif sorted(spaced) == [1] * (len(spaced) - 1) + [2]:
            extra[spaced.index(2)].append(candidate)
    rare: dict[Shape, list[str]] = {}
    for code in itertools.chain.from_iterable(_RARE):
        shape = _shape(chr(code), tokenizers)
        if shape not in heads:
            rare.setdefault(shape, []).append(chr(code))
    # Pairs of those symbols, for the shapes of texts of several (🏻👌).
    singles = [symbol for found in rare.values() for symbol in found]
    pairs: dict[Shape, list[str]] = {}
    for pair in map("".join, itertools.product(singles, repeat=2)):
        shape = _shape(pair, tokenizers)
        if shape not in heads and shape not in rare:
            pairs.setdefault(shape, []).append(pair)
    rare.update(pairs)
    digits = tuple(d for d in "0123456789" if all(t.count(d) == 1 for t in tokenizers))
    glued = _shape("ab1cd", tokenizers)
    return _Pieces(
        tuple(words),
        tuple(map(tuple, extra)),
        {shape: tuple(found) for shape, found in sorted(heads.items())},
        {shape: tuple(found) for shape, found in sorted(rare.items())},
        digits,
        tuple(count == 3 for count, _ in glued),
    )


_LOWER = "abcdefghijklmnopqrstuvwxyz"
_ACCENTED = "".join(chr(code) for code in range(0xE0, 0x100) if code != 0xF7)
_CYRILLIC = "".join(chr(code) for code in range(0x430, 0x450))
_GREEK = "".join(chr(code) for code in range(0x3B1, 0x3CA))
_CONTROLS = "".join(chr(code) for code in range(0x80, 0xA0))
_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

# fmt: off
_LONG_WORDS = (
    "accommodation", "accomplishment", "accountability", "acknowledgement", "administration",
    "advertisement", "anticipation", "appreciation", "approximately", "architecture",
    "arrangement", "assessment", "authentication", "authorization", "availability",
    "bibliography", "breakthrough", "bureaucracy", "calculation", "cardiovascular",
    "certification", "characteristic", "circumstances", "classification", "collaboration",
    "communication", "compatibility", "compensation", "comprehensive", "concentration",
    "configuration", "confirmation", "consciousness", "consequently", "consideration",
    "consolidation", "constitutional", "construction", "consultation", "contribution",
    "controversial", "conversation", "cooperation", "coordination", "correspondence",
    "cryptocurrency", "demonstration", "determination", "development", "disadvantage",
    "discrimination", "disproportionate", "distribution", "documentation", "effectiveness",
    "electricity", "embarrassment", "encouragement", "entertainment", "entrepreneurship",
    "environmental", "establishment", "evaluation", "extraordinary", "functionality",
    "generalization", "globalization", "hospitalization", "identification", "illustration",
    "implementation", "independence", "infrastructure", "installation", "institutional",
    "instrumental", "insufficient", "intellectual", "intelligence", "international",
    "interpretation", "investigation", "justification", "manufacturing", "measurement",
    "microorganism", "misunderstanding", "neighbourhood", "nevertheless", "notification",
    "observation", "organization", "participation", "particularly", "pharmaceutical",
    "philosophical", "photographer", "photosynthesis", "predominantly", "preparation",
    "presentation", "professional", "psychological", "questionnaire", "recommendation",
    "registration", "relationship", "representative", "responsibility", "satisfaction",
    "specification", "straightforward", "subscription", "substantially", "sustainability",
    "telecommunications", "thermodynamics", "transformation", "transportation",
    "troubleshooting", "unconstitutional", "understanding", "unemployment", "unfortunately",
    "vulnerability", "withdrawal", "administración", "comunicación", "información",
    "investigación", "organización", "responsabilidad", "desenvolvimento", "informação",
    "através", "também", "população", "développement", "également", "gouvernement",
    "environnement", "renseignements", "kilomètres", "préféré", "réservé", "entreprises",
    "Entwicklung", "Verantwortung", "Wahrscheinlichkeit", "Zusammenarbeit", "Bundesregierung",
    "Öffentlichkeit", "również", "województwa", "następnie", "dziękuję", "государство",
    "правительство", "информация", "деятельность", "развитие", "который", "которые",
)
# fmt: on
"""Long words of several languages, which an encoding may hold whole after a space but
split in three or more tokens alone (``disproportionate``: four cl100k tokens, one after a
space): the only heads for texts whose first word saves three or more tokens after a space,
as no short string found does that. The encodings' vocabularies hold many more
(``_vocabulary_heads``), searched after every group of ``_LATER``."""

_LATER: tuple[tuple[Sequence[str], ...], ...] = (
    (_LONG_WORDS,),
    (_LOWER, _ACCENTED, _LOWER),
    (_ACCENTED, _LOWER, _LOWER),
    (_CYRILLIC, _CYRILLIC, _CYRILLIC),
    (_GREEK, _GREEK, _GREEK),
    (_CONTROLS, _CONTROLS),
    (_PUNCTUATION, _PUNCTUATION, _PUNCTUATION),
)
"""The later heads, in groups, each of one string drawn from each of its alphabets, tried
in order: the long words; a word with an accented letter (``dép``: three tokens alone, one
after a space); Cyrillic and Greek syllables; stray control bytes (two tokens alone, four
after a space); runs of punctuation. The encodings' own words (``_vocabulary_heads``) come
after them all. None is a head of ``_pieces`` (which are at most three
letters or digits, or one or two symbols), nor of another group, so a placeholder one starts
is no earlier placeholder."""


_LATER_GROUPS = len(_LATER) + 1
"""How many groups of later heads there are: those of ``_LATER``, then the words of the
encodings' own vocabularies (``_vocabulary_heads``), searched last."""


@functools.cache
def _later_heads(tokenizers: tuple[Tokenizer, ...], group: int) -> tuple[tuple[Shape, Pools], ...]:
    """The heads of shapes no short letters or digits have, among the strings of the
    ``group``-th group of later heads, by shape.

    A byte-pair encoding counts a word it has whole after a space in one
    token but the same word alone in several, so a text such as ``dép``
    needs a head that does the same; such words are rare among short
    strings (a few in ten thousand), so each group of ``_LATER`` takes a
    fraction of a second per tokenizer to search, once, and only when a text
    needs it. The last group, the vocabularies' words, takes longer (see
    ``_vocabulary_heads``).
    """
    common = _pieces(tokenizers).heads
    if group < len(_LATER):
        candidates: Iterable[str] = map("".join, itertools.product(*_LATER[group]))
    else:
        candidates = _vocabulary_heads(tokenizers)
    found: dict[Shape, list[str]] = {}
    for candidate in candidates:
        shape = _shape(candidate, tokenizers)
        if shape not in common:
            found.setdefault(shape, []).append(candidate)
    return tuple((shape, (("", tuple(heads)),)) for shape, heads in sorted(found.items()))


def _vocabulary_heads(tokenizers: tuple[Tokenizer, ...]) -> tuple[str, ...]:
    """The words an encoding of the run holds whole after a space but splits alone (its
    ``spaced_words``), of every encoding in turn, or none unless every tokenizer lists them.

    These are the heads of a text whose first word is such a word
    (``disproportionate``: four cl100k_base tokens alone, one after a
    space); ``_LONG_WORDS`` holds a few, cl100k_base some 18,000 and
    o200k_base some 52,000. Finding them and their shapes takes about 0.5 s
    under cl100k_base, 1.5 s under o200k_base and 3 s under both (measured
    in a fresh process on a shared two-core machine), once per process and
    set of tokenizers (cached), paid only by a run with a text no earlier
    head fits.
    """
    listed = [tokenizer for tokenizer in tokenizers if isinstance(tokenizer, SpacedWords)]
    if len(listed) < len(tokenizers):
        return ()
    words = dict.fromkeys(word for tokenizer in listed for word in tokenizer.spaced_words())
    # Every earlier head is at most three characters or a long word: leaving those out
    # keeps each placeholder this group starts apart from the earlier groups' ones.
    return tuple(word for word in words if len(word) > 3 and word not in _LONG_WORDS)


def _tokenizers(header: dict[str, Any]) -> tuple[Tokenizer, ...]:
    """Every tokenizer that measured the run (the seed's word count if none did).

    Building the policies also checks that the header loads.
    """
    tables = header.get("policies")
    if not isinstance(tables, dict):
        raise BadInput("line 1: the header names no policies")
    # Run files are data: a policy named by import path is stood in for, not imported.
    policies = Policies.from_params(tables, "line 1: policies", imports=False)
    epochs = epochs_from_header(header.get("epochs"), policies, "line 1: epochs")
    found: list[Tokenizer] = []
    for epoch in epochs:
        tokenizer = getattr(epoch.policies.compaction, "tokenizer", None)
        if tokenizer is not None and tokenizer not in found:
            found.append(tokenizer)
    return tuple(found) or (WordCount(),)


def _digest(recorded: RunFile) -> bytes:
    """A digest of the whole run (not of who wrote it), the default key of the placeholders."""
    digest = hashlib.sha256()

    def feed(data: Any) -> None:
        digest.update(json.dumps(data, sort_keys=True).encode("ascii"))

    feed({name: value for name, value in recorded.header.items() if name not in _WRITER_OWNED})
    for batch in recorded.batches:
        feed(command_data(batch.command))
        for event in batch.events:
            feed([type(event).__name__, event_data(event)])
    return digest.digest()


def _scrub(value: Any, masks: Masks) -> Any:
    """A header value with every string masked, except the names of policies and tokenizers."""
    if isinstance(value, str):
        return masks.text(value)
    if isinstance(value, list):
        return [_scrub(item, masks) for item in value]
    if isinstance(value, dict):
        return {
            name: item if name in _NAMES and isinstance(item, str) else _scrub(item, masks)
            for name, item in value.items()
        }
    return value


def _closed_roles(batch: RecordedBatch) -> None:
    """Refuse a batch with a role outside ``ROLES`` (a log written before roles were
    a closed set): a role is kept as it is, so it must not be free text."""
    roles = [batch.command.role] if isinstance(batch.command, AddTurn) else []
    roles += [event.role for event in batch.events if isinstance(event, TurnAdded)]
    for role in roles:
        wrong = role_error(role)
        if wrong is not None:
            raise BadInput(
                f"step {batch.step} (line {batch.line}): {wrong}; a redacted copy keeps "
                "roles as they are, so it would keep this text"
            )


def _event(event: Event, masks: Masks, cold: int) -> Event:
    """``event`` with its texts masked; ``cold`` counts the COLD turns after it."""
    if isinstance(event, TurnAdded):
        text = masks.turn(event.role, event.text)
        calls, answers = masks.calls(event.calls), masks.calls(event.answers)
        return TurnAdded(
            event.turn, event.role, text, event.tokens, event.salient, calls, answers, event.pinned
        )
    if isinstance(event, CompactionTriggered):
        warm = tuple(WarmItem(i.turn, masks.text(i.text), i.tokens) for i in event.warm)
        # The tiered gist only counts turns; the gist invariant reads it word for word.
        gist = event.gist if event.gist == gist_for(cold) else masks.text(event.gist)
        asked = _asked(event.asked, masks)
        # A text read in place of a cleared result is the policy's placeholder, which the
        # header's masking replaces too: masked alike, the copy clears to the same text.
        cleared = tuple(WarmItem(i.turn, masks.text(i.text), i.tokens) for i in event.cleared)
        return CompactionTriggered(
            event.budget,
            warm,
            event.dropped,
            event.cold,
            gist,
            event.gist_tokens,
            asked,
            cleared,
            event.kept,
        )
    if isinstance(event, FactWritten):
        return FactWritten(
            event.id, masks.text(event.key), masks.text(event.text), event.importance
        )
    if isinstance(event, Queried):
        return Queried(
            masks.text(event.text), masks.text(event.key), event.k, event.results, event.scores
        )
    if isinstance(event, EpisodeRecorded):
        return EpisodeRecorded(event.id, masks.text(event.text))
    if isinstance(event, Consolidated):
        semantic = tuple(
            SemanticFact(masks.text(f.key), masks.text(f.text), f.importance, f.episode)
            for f in event.semantic
        )
        procedural = tuple(ProceduralRule(masks.text(r.text), r.episode) for r in event.procedural)
        return Consolidated(event.episodes, semantic, procedural, _asked(event.asked, masks))
    if isinstance(event, ClockAdvanced | FactRead | Superseded | Evicted):
        return event
    assert_never(event)


def _asked(calls: tuple[ModelCall, ...], masks: Masks) -> tuple[ModelCall, ...]:
    """Model calls with their answers masked (free text) and no prompt hash (which could
    confirm a guess of the prompt); the model, tokens, seconds and cache flag are kept."""
    return tuple(
        ModelCall(
            masks.text(call.output),
            call.model,
            _UNKNOWN_PROMPT,
            call.prompt_tokens,
            call.completion_tokens,
            call.seconds,
            call.cached,
        )
        for call in calls
    )


def _command(command: Command, masks: Masks) -> Command:
    """``command`` with its texts masked as its events' are."""
    if isinstance(command, AddTurn):
        text = masks.turn(command.role, command.text)
        calls, answers = masks.calls(command.calls), masks.calls(command.answers)
        return AddTurn(command.role, text, command.salient, calls, answers, command.pin)
    if isinstance(command, WriteFact):
        return WriteFact(
            masks.text(command.key),
            masks.text(command.text),
            command.importance,
            masks.optional(command.supersedes),
        )
    if isinstance(command, ReadFact):
        return ReadFact(masks.optional(command.key), command.id)
    if isinstance(command, Query):
        return Query(masks.text(command.text), masks.text(command.key), command.k)
    if isinstance(command, RecordEpisode):
        return RecordEpisode(masks.text(command.text))
    if isinstance(command, AdvanceClock | Consolidate):
        return command
    assert_never(command)


def _append(run: Run, command: Command, events: list[Event], batch: RecordedBatch) -> None:
    try:
        run.append(command, events)
    except CorruptLog as error:
        raise BadInput(f"step {batch.step} (line {batch.line}): {error}") from None
