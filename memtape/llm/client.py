"""Asking a model through the official ``openai`` SDK (the ``llm`` extra).

The SDK is imported here, inside ``chat``, and only when a model is actually
asked: a command that reads a run never imports it. Its client is made once
per process and server, with the SDK's own retries and backoff
(``max_retries``) and timeout. A request that still fails is a
``ModelUnavailable``: one line naming the server and what went wrong, with
no traceback and no key (a key an error body quotes back is masked).
"""

import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

import attrs

from memtape.core.errors import BadInput, Rejected
from memtape.llm.cache import StoredAnswer
from memtape.llm.config import KEY_ENV, OPENAI, ModelConfig

EXTRA = "llm"
"""The optional extra that brings the SDK."""

_LOCAL_KEY = "unused"
"""The key handed to a server other than OpenAI's when ``OPENAI_API_KEY`` is not set: the
SDK insists on one, and local servers (llama.cpp, Ollama, vLLM) accept any."""

_QUOTED = 160
"""The most characters of a server's error message a failure line quotes."""


class ModelUnavailable(Rejected):
    """The model could not be asked, or did not answer: nothing was appended."""


class NotChosen(ModelUnavailable):
    """A request would go where a file, not the user, chose (a run's recorded ``[llm]``
    table, untrusted): it is refused before anything is sent."""


@attrs.frozen
class Reply:
    """What a model answered, with the usage the server counted and the seconds it took."""

    output: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    def stored(self) -> StoredAnswer:
        """The reply as the cache stores it."""
        return StoredAnswer(self.output, self.prompt_tokens, self.completion_tokens, self.seconds)


_clients: dict[tuple[int, str, str, float, int], Any] = {}
_clients_lock = threading.Lock()


def chat(
    config: ModelConfig, messages: Sequence[Mapping[str, str]], *, json_object: bool = False
) -> Reply:
    """Ask ``config``'s model ``messages`` (Chat Completions): its reply, or
    ``ModelUnavailable``. With ``json_object`` the request asks for a JSON object
    (``response_format``), which OpenAI, vLLM, llama.cpp's server and Ollama honour.

    A ``recorded`` table (a run file's, untrusted) is refused (``NotChosen``) before
    anything is sent: the key goes only where the user chose."""
    structured = {"response_format": {"type": "json_object"}} if json_object else {}
    completion, server, seconds = _sent(
        config,
        lambda client: client.chat.completions.create(
            model=config.model, messages=list(messages), **config.parameters(), **structured
        ),
    )
    return _reply(completion, server, config.model, seconds)


def embeddings(config: ModelConfig, texts: Sequence[str]) -> tuple[list[list[float]], int, float]:
    """The embedding of each of ``texts`` by ``config``'s model (``/v1/embeddings``), in order,
    with the prompt tokens the server counted and the seconds it took; ``ModelUnavailable``
    (or ``NotChosen``, for a run's recorded table) as ``chat``."""
    response, server, seconds = _sent(
        config,
        lambda client: client.embeddings.create(
            model=config.model, input=list(texts), encoding_format="float"
        ),
    )
    data = getattr(response, "data", None)
    vectors = [getattr(item, "embedding", None) for item in data or ()]
    if len(vectors) != len(texts) or not all(_is_vector(vector) for vector in vectors):
        raise ModelUnavailable(
            f"the model server {server} answered model {config.model!r} without an embedding "
            f"(a list of numbers) for each of the {len(texts)} texts"
        )
    usage = getattr(response, "usage", None)
    tokens = getattr(usage, "prompt_tokens", 0)
    found = [[float(x) for x in vector or ()] for vector in vectors]
    return found, tokens if type(tokens) is int else 0, seconds


def _is_vector(value: Any) -> bool:
    return isinstance(value, list) and all(
        type(x) in (int, float) and math.isfinite(x) for x in value
    )


def _sent(config: ModelConfig, request: Any) -> tuple[Any, str, float]:
    """``request(client)`` made to ``config``'s server: its response, the server and the
    seconds it took; each way it can fail is one ``ModelUnavailable`` line."""
    refusal = config.refusal()
    if refusal is not None:
        raise NotChosen(refusal)
    try:
        import openai  # noqa: PLC0415 (the extra is imported only when a model is asked)
    except ImportError:
        from memtape.core.extras import install_hint  # noqa: PLC0415 (a refusal only)

        raise BadInput(
            f"asking model {config.model!r} needs the openai SDK, which is not installed "
            f"({install_hint(EXTRA)})"
        ) from None
    server = config.server()
    key = _key(server)
    client = _client(openai, server, key, config)
    began = time.perf_counter()
    try:
        response = request(client)
    except openai.APITimeoutError:
        raise ModelUnavailable(
            f"the model server {server} did not answer within {config.timeout:g} s "
            f"({_tries(config)})"
        ) from None
    except openai.APIConnectionError as error:
        reason = _masked(str(error.__cause__ or error), key)
        raise ModelUnavailable(
            f"cannot reach the model server {server}: {reason} ({_tries(config)})"
        ) from None
    except openai.APIStatusError as error:
        raise ModelUnavailable(_status_line(server, error, key, config)) from None
    except ValueError as error:  # the body was not JSON
        raise ModelUnavailable(
            f"the model server {server} answered with malformed JSON: {_masked(str(error), key)}"
        ) from None
    except openai.OpenAIError as error:
        raise ModelUnavailable(
            f"asking the model server {server} failed: {_masked(str(error), key)}"
        ) from None
    return response, server, time.perf_counter() - began


def _key(server: str) -> str:
    key = os.environ.get(KEY_ENV)
    if key:
        return key
    if server == OPENAI:
        raise ModelUnavailable(
            f"the model server {server} needs a key: set {KEY_ENV} (or point base_url at "
            "another server)"
        )
    return _LOCAL_KEY


def _client(openai: Any, server: str, key: str, config: ModelConfig) -> Any:
    """The SDK's client for this process, server, key and retry settings (made once)."""
    # The key is part of the lookup only in memory, so a changed variable takes effect.
    where = (os.getpid(), server, key, config.timeout, config.max_retries)
    with _clients_lock:
        client = _clients.get(where)
        if client is None:
            client = _clients[where] = openai.OpenAI(
                base_url=server, api_key=key, timeout=config.timeout, max_retries=config.max_retries
            )
    return client


def _tries(config: ModelConfig) -> str:
    retries = config.max_retries
    return f"after {retries} {'retry' if retries == 1 else 'retries'}" if retries else "no retries"


def _status_line(server: str, error: Any, key: str, config: ModelConfig) -> str:
    status = int(error.status_code)
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "an error"
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    said = f": {_masked(str(message), key)}" if message else ""
    retried = f" ({_tries(config)})" if status == 429 or status >= 500 else ""
    return f"the model server {server} answered {status} {phrase}{said}{retried}"


def _masked(text: str, key: str) -> str:
    """``text`` in one short line, with the key (should a server quote it) masked."""
    if key and key != _LOCAL_KEY:
        text = text.replace(key, "***")
    text = " ".join(text.split())
    return text if len(text) <= _QUOTED else f"{text[: _QUOTED - 3]}..."


def _reply(completion: Any, server: str, model: str, seconds: float) -> Reply:
    """The reply's text and usage, or ``ModelUnavailable`` when it has no text."""
    choices = getattr(completion, "choices", None)
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise ModelUnavailable(
            f"the model server {server} answered model {model!r} without a message text "
            "(no choices[0].message.content)"
        )
    usage = getattr(completion, "usage", None)
    prompt_tokens = getattr(usage, "prompt_tokens", 0)
    completion_tokens = getattr(usage, "completion_tokens", 0)
    return Reply(
        content,
        prompt_tokens if type(prompt_tokens) is int else 0,
        completion_tokens if type(completion_tokens) is int else 0,
        seconds,
    )
