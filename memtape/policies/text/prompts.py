"""A policy's prompt for a model, from its table: ``prompt = "..."`` or ``prompt_file = "path"``
(or, for a policy with several prompts, ``NAME = "..."`` or ``NAME_file = "path"``).

A prompt file is read when the scenario is loaded, relative to the current
directory; the policy's parameters then carry the text itself, so a run
file records the prompt it was made with and never names a file to read.
"""

import re
from collections.abc import Mapping
from pathlib import Path

from memtape.core.paths import read_regular
from memtape.policies.plumbing.params import Params


def prompt_param(
    params: Params,
    default: str,
    required: str,
    what: str,
    *,
    strict: bool,
    key: str = "prompt",
) -> str:
    """The prompt the table gives as ``key`` (or ``key_file``), or ``default``.

    ``strict`` (a scenario) also refuses a prompt that does not say
    ``required`` (the placeholder of ``what`` the model is shown); a run
    file's prompt is taken as recorded (a redacted copy holds a placeholder).
    """
    text = params.optional(key)
    path = params.optional(f"{key}_file")
    if text is not None and path is not None:
        raise params.error(key, f"and {key}_file both give the prompt: keep one")
    name = key
    if path is not None:
        name = f"{key}_file"
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


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each placeholder of ``values`` (``"{turns}"``...) replaced by its
    text, in one pass: a placeholder a value happens to hold is not replaced in turn, and
    other braces are left as they are."""
    pattern = re.compile("|".join(re.escape(name) for name in values))
    return pattern.sub(lambda match: values[match.group(0)], template)
