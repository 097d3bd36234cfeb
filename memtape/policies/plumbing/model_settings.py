"""Reading a scenario's ``[llm]`` table into a ``ModelConfig`` (``memtape.llm.config``)."""

from collections.abc import Mapping, Sequence
from typing import Any

from memtape.core.errors import BadInput
from memtape.llm.config import KEY_ENV, MAX_ANSWER_BYTES, ModelConfig
from memtape.policies.plumbing.params import Params

_SECRETS = ("api_key", "key", "token", "password")
"""Settings refused outright: a secret in a scenario would be written into every run file."""


def model_config(
    data: Mapping[str, Any], where: str, *, strict: bool = True, recorded: str | None = None
) -> ModelConfig:
    """The settings of an ``[llm]`` table; ``where`` names it in errors.

    ``strict`` (a scenario, the user's own file) also checks that the base
    URL is an http(s) URL; a run file's header is read as it was recorded
    (a redacted copy holds placeholders). ``recorded`` names the run file an
    untrusted table was read from: its model and server are shown, never
    asked (``ModelConfig.recorded``).
    """
    for secret in _SECRETS:
        if secret in data:
            raise BadInput(
                f"{where}: {secret} does not belong in a scenario (its table is written "
                f"into every run file): set {KEY_ENV} in the environment instead"
            )
    params = Params(data, where)
    model = params.text("model")
    if not model.strip():
        raise params.error("model", "must name a model, got an empty string")
    base_url = params.optional("base_url")
    if base_url is not None and not isinstance(base_url, str):
        raise params.error("base_url", f"must be a string, got {base_url!r}")
    if strict and base_url is not None and not base_url.startswith(("http://", "https://")):
        raise params.error("base_url", f"must be an http:// or https:// URL, got {base_url!r}")
    temperature = params.number("temperature", 0.0, minimum=0.0, maximum=2.0)
    seed = params.optional("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise params.error("seed", f"must be an integer, got {seed!r}")
    timeout = params.number("timeout", 60.0, minimum=0.0, exclusive_minimum=True)
    max_retries = params.integer("max_retries", 2, minimum=0)
    max_answer_bytes = params.integer("max_answer_bytes", MAX_ANSWER_BYTES, minimum=1)
    embedding_model = params.optional("embedding_model")
    if embedding_model is not None and (
        not isinstance(embedding_model, str) or not embedding_model.strip()
    ):
        raise params.error("embedding_model", f"must name a model, got {embedding_model!r}")
    params.done()
    return ModelConfig(
        model,
        base_url,
        temperature,
        seed,
        timeout,
        max_retries,
        max_answer_bytes,
        embedding_model,
        recorded=recorded,
    )


def model_settings(settings: Sequence[str], target: str) -> tuple[str, ...]:
    """``settings`` if each is an ``llm.PARAM=VALUE`` (the model a recorded run asks),
    else the one-line refusal: a run's other policies are changed by a fork."""
    for setting in settings:
        if not setting.strip().startswith("llm."):
            raise BadInput(
                f"{target}: --set {setting!r}: a recorded run takes only llm.* settings "
                "(the model asked, e.g. llm.model=NAME); fork it to change its policies"
            )
    return tuple(settings)
