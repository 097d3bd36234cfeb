"""A policy's prompt for a model, from its table: ``prompt = "..."`` or ``prompt_file = "path"``.

A prompt file is read when the scenario is loaded, relative to the current
directory; the policy's parameters then carry the text itself, so a run
file records the prompt it was made with and never names a file to read.
"""

from pathlib import Path

from memtape.core.paths import read_regular
from memtape.policies.params import Params


def prompt_param(params: Params, default: str, required: str, what: str, *, strict: bool) -> str:
    """The prompt the table gives, or ``default``.

    ``strict`` (a scenario) also refuses a prompt that does not say
    ``required`` (the placeholder of ``what`` the model is shown); a run
    file's prompt is taken as recorded (a redacted copy holds a placeholder).
    """
    text = params.optional("prompt")
    path = params.optional("prompt_file")
    if text is not None and path is not None:
        raise params.error("prompt", "and prompt_file both give the prompt: keep one")
    name = "prompt"
    if path is not None:
        name = "prompt_file"
        if not isinstance(path, str) or not path:
            raise params.error(name, f"must be a path (a string), got {path!r}")
        data = read_regular(Path(path), "prompt file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise params.error(name, f"{path}: not UTF-8 text: {error}") from None
    if text is None:
        return default
    if not isinstance(text, str):
        raise params.error(name, f"must be a string, got {text!r}")
    if strict and required not in text:
        raise params.error(name, f"must say {required}, where {what} go")
    return text
