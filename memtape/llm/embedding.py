"""Texts embedded by a model, through the cache: what a recall by embeddings asks.

Each text's vector is cached on its own, under the server the table names,
the model and the text (``memtape.llm.cache``), so a recall sends only the
texts no earlier recall embedded (a turn that left the window is embedded
once, whatever the number of recalls that search it), a re-run or a fork
sends nothing, and a run's recorded table, which may send nothing, finds the
vectors it was given. The texts not cached are sent in one request, or in
requests of ``CHUNK`` (OpenAI's cap on a request's inputs). While
recorded answers only are in force (``memtape check`` without ``--live``),
nothing is sent: a vector not cached is ``Unanswered``.
"""

import json
from collections.abc import Sequence

from memtape.llm.answers import Unanswered, recorded_only
from memtape.llm.cache import StoredAnswer, cache_in_force, cache_key
from memtape.llm.config import ModelConfig

KIND = {"kind": "embedding"}
"""The parameters a cached vector is keyed under, beside its text: never a chat answer's."""

CHUNK = 2048
"""The most texts one request sends: OpenAI refuses a request of more inputs."""


def embedded(config: ModelConfig, texts: Sequence[str]) -> list[list[float]]:
    """The vector of each of ``texts`` by ``config``'s model, in order: from the cache, or
    asked (``memtape.llm.client.embeddings``, which refuses a recorded table and says in
    one line what failed) and cached; ``Unanswered`` when recorded answers only are in
    force and a vector is not cached."""
    cache = cache_in_force()
    server = config.named_server()
    keys = [cache_key(server, config.model, [{"role": "user", "content": t}], KIND) for t in texts]
    vectors: dict[int, list[float]] = {}
    for index, key in enumerate(keys):
        stored = None if cache is None else cache.get(key)
        if stored is not None:
            vectors[index] = json.loads(stored.output)
    missing = [index for index in range(len(texts)) if index not in vectors]
    if missing and recorded_only():
        raise Unanswered(
            f"the vectors of {len(missing)} of its {len(texts)} texts by model "
            f"{config.model!r} are not cached (a run records a recall's scores, not its "
            "vectors), and nothing is sent without --live, which asks for them"
        )
    if missing:
        from memtape.llm.client import embeddings  # noqa: PLC0415 (the SDK only when asked)

        for first in range(0, len(missing), CHUNK):
            chunk = missing[first : first + CHUNK]
            found, tokens, seconds = embeddings(config, [texts[index] for index in chunk])
            for index, vector in zip(chunk, found, strict=True):
                vectors[index] = vector
                if cache is not None:
                    share = tokens // len(chunk)
                    cache.put(keys[index], StoredAnswer(json.dumps(vector), share, 0, seconds))
    return [vectors[index] for index in range(len(texts))]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of the angle between ``a`` and ``b`` (0 when either is all zeros, or their
    lengths differ): plain Python, which is fast enough for the few thousand turns a recall
    searches, so numpy is not needed."""
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5
    return dot / norms if norms else 0.0
