"""What every compaction policy shares: checking and measuring an arriving turn,
and reading the parameters common to them all (``budget``, ``tokenizer``)."""

from collections.abc import Mapping
from typing import Any

from memtape.core.commands import ROLES, AddTurn, role_refused
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import TurnAdded
from memtape.core.packing import maker
from memtape.core.state import Window
from memtape.core.values import MAX_TOKENS
from memtape.policies.plumbing.params import Params
from memtape.policies.text.tokenizers import TOKENIZERS, Tokenizer, WordCount, tokenizer_named


def arriving(window: Window, command: AddTurn, tokenizer: Tokenizer) -> TurnAdded:
    """The turn ``command`` adds to ``window``: numbered, measured, its salience settled.

    A turn costs the tokens of ``"{role}: {text}"``, unless the command says what it
    costs (``AddTurn.tokens``, an integer in 0..``MAX_TOKENS``, what a run's readers take
    for one text); a turn whose salience is not given is salient when its role is
    ``tool``. A malformed turn (a role outside ``ROLES``, a text that is not a
    string...) is ``Rejected``, and so is one whose tool-call structure is not what the
    run allows (``structure_error``).
    """
    role, text, salient = command.role, command.text, command.salient
    if role not in ROLES or not isinstance(role, str):  # role_error, without its call
        raise Rejected(role_refused(role))
    if not isinstance(text, str):
        raise Rejected(f"a turn's text must be a string, got {text!r}")
    if salient is not None and not isinstance(salient, bool):
        raise Rejected(f"a turn's salient flag must be true, false or unset, got {salient!r}")
    calls, answers = command.calls, command.answers
    # Most turns call and answer nothing: two empty tuples need no more checking.
    plain = calls == () and answers == ()
    if not plain:
        calls, answers = _ids("calls", calls), _ids("answers", answers)
        both = set(calls) & set(answers)
        if both:
            raise Rejected(f"a turn cannot answer its own call, got {sorted(both)[0]!r} in both")
    if not isinstance(command.pin, bool):
        raise Rejected(f"a turn's pin flag must be true or false, got {command.pin!r}")
    if not plain:
        wrong = structure_error(window, calls, answers)
        if wrong is not None:
            raise Rejected(wrong)
    if salient is None:
        salient = role == "tool"
    tokens = command.tokens
    if tokens is None:
        tokens = tokenizer.count(f"{role}: {text}")
    elif isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= MAX_TOKENS:
        # The bound every reader holds a TurnAdded to: a run past it could not be read.
        raise Rejected(f"a turn's tokens must be an integer in 0..{MAX_TOKENS}, got {tokens!r}")
    return _TURN(window.turns + 1, role, text, tokens, salient, calls, answers, command.pin)


_TURN = maker(TurnAdded)
"""``TurnAdded(...)``, every field given, made through its slots (``maker``): every
command of a run makes one."""


def structure_error(window: Window, calls: tuple[str, ...], answers: tuple[str, ...]) -> str | None:
    """Why the next turn of ``window`` may not call ``calls`` and answer ``answers``, or None.

    The rule is the run's, not HOT's: a turn may answer an id that an earlier
    turn called and no turn has answered since (``window.waiting``), wherever
    the call now is (a policy may have folded it away); it may call an id
    unless that id is still waiting for its result (an id is free again once
    answered). So an answer to an id never called, or a second answer to one
    call, is refused: a transcript that starts mid-session with results of
    calls it does not hold must leave those ids out (or start earlier).
    """
    waiting = window.waiting
    turn = window.turns + 1
    for answered in answers:
        if answered not in waiting:
            return (
                f"turn {turn} answers {answered!r}, which no call is waiting on "
                "(no earlier turn called it, or its result already arrived)"
            )
    for called in calls:
        caller = waiting.get(called)
        if caller is not None:
            return (
                f"turn {turn} calls {called!r}, which turn {caller} called and is still waiting on"
            )
    return None


def _ids(name: str, ids: object) -> tuple[str, ...]:
    """A turn's ``calls`` or ``answers``: distinct non-empty ids, or ``Rejected``."""
    if not isinstance(ids, tuple) or not all(isinstance(i, str) and i for i in ids):
        raise Rejected(f"a turn's {name} must be a list of non-empty ids, got {ids!r}")
    if len(set(ids)) != len(ids):
        raise Rejected(f"a turn's {name} name an id twice: {ids!r}")
    return ids


def shared_params(params: Params) -> tuple[int, Tokenizer]:
    """The budget (required) and the tokenizer (default: word count) of a ``[compaction]`` table."""
    budget = params.integer("budget", minimum=1)
    try:
        tokenizer = tokenizer_named(params.text("tokenizer", WordCount.name))
    except BadInput as error:
        # The error already says "tokenizer": naming the parameter again would double it.
        raise BadInput(f"{params.where}: {error}") from None
    return budget, tokenizer


def budget_only(data: Mapping[str, Any], where: str) -> tuple[int, Tokenizer]:
    """The budget and tokenizer of a ``[compaction]`` table that may hold nothing else."""
    params = Params(data, where)
    shared = shared_params(params)
    params.done()
    return shared


def budget_table(name: str, budget: int, tokenizer: Tokenizer) -> dict[str, Any]:
    """The scenario table of a compaction policy whose only parameters are the shared ones."""
    return {"policy": name, "budget": budget, "tokenizer": tokenizer.name}


def check_shared(budget: Any, tokenizer: Any) -> None:
    """Refuse a budget that is not a positive integer, or a tokenizer that cannot count."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise BadInput(f"budget must be a positive integer, got {budget!r}")
    if not callable(getattr(tokenizer, "count", None)) or isinstance(tokenizer, str):
        known = ", ".join(sorted(TOKENIZERS))
        raise BadInput(f"tokenizer must be a Tokenizer or one's name ({known}), got {tokenizer!r}")


def check_count(name: str, value: Any) -> None:
    """Refuse a count parameter (``keep``, ``hot_n``...) that is not an integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInput(f"{name} must be an integer >= 0, got {value!r}")
