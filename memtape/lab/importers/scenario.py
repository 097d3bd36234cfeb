"""A transcript as a scenario file: one turn step per turn, the policies in the header.

Each turn is a ``[[step]]`` with ``turn`` (its role), ``text``, ``calls``
and ``answers`` (when it has any), ``salient`` (when the rule makes it other
than the default, which is: tool results are salient), ``pin``, and
``usage`` (what its response was billed, when the transcript says).

The ``[import]`` table after ``[scenario]`` is the import's ledger
(``memtape.lab.importers.ledger``) with the file's name and format: data the
loader keeps (``Scenario.imported``) and no policy reads.

Which turns are salient is a rule: ``tool`` (the default), ``all``,
``none``, or a comma-separated list of roles, each of which some turn must
have (a typo would otherwise leave every turn chatter, silently). A system
prompt is chatter unless the rule names ``system``: under tiered
compaction it is the first thing dropped once it leaves HOT.

Which turns are pinned (``pin = true``: no policy moves them) is ``--pin``:
``system`` pins every system turn (there must be one), ``first`` the first
turn, ``none`` (the default) none.

The header is tiered compaction (``budget``, ``hot_n``, ``tokenizer``) and
the seed's forgetting; a transcript that recorded compactions (a Claude
Code session's boundaries) is headed by the ``recorded`` policy instead,
with the same ``budget`` and ``tokenizer``, which applies them (see
``memtape.policies.window.recorded``).
"""

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memtape.core.commands import ROLES, AddTurn
from memtape.core.errors import BadInput
from memtape.lab.choices import DEFAULT_BUDGET, DEFAULT_HOT_N, PINS
from memtape.lab.importers.compared import measured
from memtape.lab.importers.transcript import Transcript, Turn
from memtape.lab.progress import EVERY
from memtape.lab.scenario_file import header
from memtape.policies.text.tokenizers import WordCount, tokenizer_named
from memtape.policies.window.compaction_records import CompactionRecord
from memtape.policies.window.recorded import RecordedCompaction
from memtape.projections.billing.prices import shipped_prices
from memtape.scenarios.writer import Value, scenario_file

DEFAULT_SALIENT = "tool"
"""The salience rule when none is given: tool results are salient, nothing else."""


def salient_roles(rule: str) -> frozenset[str] | None:
    """The roles a ``--salient`` rule makes salient; None for ``all``."""
    text = rule.strip()
    if text == "all":
        return None
    if text == "none":
        return frozenset()
    roles = [role.strip() for role in text.split(",")]
    if not all(role in ROLES for role in roles):
        raise BadInput(
            f"--salient {rule!r}: write tool, all, none, or roles separated by commas "
            f"(of {', '.join(ROLES)})"
        )
    return frozenset(roles)


def check_pin(pin: str) -> str:
    """``pin``, refused unless one of ``PINS``."""
    if pin not in PINS:
        raise BadInput(f"--pin {pin!r}: write one of {', '.join(PINS)}")
    return pin


def pinned(pin: str, role: str, number: int) -> bool:
    """Whether ``--pin pin`` pins turn ``number`` (1-based), whose role is ``role``."""
    return (pin == "system" and role == "system") or (pin == "first" and number == 1)


class NothingSalient(UserWarning):
    """An import in which no turn is salient: every summary of the run will be empty."""


class CallsLeftWaiting(UserWarning):
    """An import holding a tool call the file never answered though the conversation went on
    past it: the run's unit from that call on never closes."""


def _warn_if_left_waiting(transcript: Transcript, path: Path) -> None:
    """Warn when the conversation went on past a call the file never answered: said at
    import, not first by ``memtape check`` on the run."""
    waiting = transcript.left_waiting()
    if not waiting:
        return
    call, number = waiting[0]
    first = f"call {call!r} of turn {number} ({transcript.turns[number - 1].where})"
    said = (
        f"1 tool call never got its result and the conversation went on past it: {first}"
        if len(waiting) == 1
        else f"{len(waiting)} tool calls never got their results and the conversation went "
        f"on past them, the first {first}"
    )
    warnings.warn(
        CallsLeftWaiting(
            f"{path}: {said}; every turn after it is one unit no policy can compact "
            "(memtape check on the run names each)"
        ),
        stacklevel=3,
    )


def _warn_if_nothing_salient(
    path: Path, rule: str, roles: frozenset[str] | None, present: set[str]
) -> None:
    """Warn when the rule makes no turn salient, unless it asked for none."""
    if rule.strip() == "none" or not present or roles is None or roles & present:
        return
    had = ", ".join(sorted(present))
    warnings.warn(
        NothingSalient(
            f"{path}: no turn is salient under --salient {rule} (its turns are {had}), so "
            "every summary will be empty; --salient all, or roles such as "
            "--salient user,assistant, makes turns salient"
        ),
        stacklevel=3,
    )


def transcript_scenario(
    transcript: Transcript,
    path: Path,
    *,
    salient: str | None = None,
    pin: str = "none",
    budget: int = DEFAULT_BUDGET,
    hot_n: int = DEFAULT_HOT_N,
    tokenizer: str = WordCount.name,
    probes: Sequence[Mapping[str, Any]] = (),
    progress: Callable[[int, int], None] | None = None,
    told: Callable[[str], None] | None = None,
    tokens: Sequence[int | None] | None = None,
    said: Sequence[str] = (),
) -> str:
    """The scenario file's text for ``transcript``, read from the file at ``path``.

    ``salient`` is the rule (None: ``DEFAULT_SALIENT``, which holds for a
    transcript without tool results too); ``probes`` are ``[[probe]]``
    tables (``{"text", "from"}``) to plant. ``progress(done, total)`` hears how
    many messages are made steps, every ``EVERY`` and at the end. ``told`` hears
    one line per compaction the transcript recorded: the agent's token counts
    beside memtape's (``memtape.lab.importers.compared``), also written in the
    scenario's comment. ``tokens``, when given, is each turn's measured count (None: the
    tokenizer counts it), written as the step's ``tokens``; ``said`` are lines about the
    import's choices (the budget, what measured the turns), told before the compactions'
    and written in the comment.
    """
    if tokens is not None and len(tokens) != len(transcript.turns):
        raise ValueError(f"{len(tokens)} counts for {len(transcript.turns)} turns")
    rule = DEFAULT_SALIENT if salient is None else salient
    roles = salient_roles(rule)
    policies = header(budget, hot_n, tokenizer)
    check_pin(pin)
    present = {turn.role for turn in transcript.turns}
    if salient is not None and roles:
        _check_roles(roles, present, path, f"--salient {rule!r}")
    if pin == "system":
        _check_roles(frozenset({"system"}), present, path, "--pin system")
    _warn_if_nothing_salient(path, rule, roles, present)
    _warn_if_left_waiting(transcript, path)
    recorded = _recorded(transcript, budget, tokenizer) if transcript.compactions else None
    if recorded is not None:
        policies["compaction"] = recorded.params()
    commands: list[AddTurn] = []
    steps: list[Step] = []
    total = len(transcript.turns)
    for number, turn in enumerate(transcript.turns, start=1):
        if progress is not None and number % EVERY == 0:
            progress(number, total)
        flag = roles is None or turn.role in roles
        pin_it = pinned(pin, turn.role, number)
        count = None if tokens is None else tokens[number - 1]
        step = _step(turn, flag, pin_it, count)
        steps.append(step)
        if recorded is not None:
            salience = flag if "salient" in step else None
            commands.append(
                AddTurn(turn.role, turn.text, salience, turn.calls, turn.answers, pin_it, count)
            )
    info: dict[str, Value] = {
        "name": path.stem,
        "about": f"A transcript ({transcript.format}) imported from {path.name}.",
    }
    by = tokenizer if tokens is None else f"the provider's counts or {tokenizer}"
    lines = [*said] + (
        [m.line(by) for m in measured(recorded, commands)] if recorded is not None else []
    )
    for line in lines:
        if told is not None:
            told(line)
    comment = _comment(transcript, path.name, rule, pin, hot_n=hot_n, compared=lines)
    imported: dict[str, Any] = {"file": path.name, "format": transcript.format}
    if transcript.ledger is not None:
        imported.update(transcript.ledger.table())
    if tokens is not None:
        imported["tokens_recorded"] = sum(count is not None for count in tokens)
        imported["tokens_measured"] = {tokenizer: sum(count is None for count in tokens)}
    if progress is not None:
        progress(total, total)
    # Priced as the transcript's model only when memtape has its price: a bench of the
    # scenario is then never refused for a model it cannot price.
    if transcript.model is not None:
        if shipped_prices().knows(transcript.model):
            policies["cost"] = {"model": transcript.model}
        elif told is not None:
            told(unpriced(transcript.model))
    return scenario_file(comment, info, policies, steps, probes, imported=imported)


def unpriced(model: str) -> str:
    """The line an import tells when memtape ships no price for the transcript's model."""
    return (
        f"cost: memtape ships no price for {model!r}, so the scenario is not priced; "
        f"bench --prices FILE.toml --set cost.model={model} prices it (FILE.toml holding "
        f"a row for the model)"
    )


Step = dict[str, Value | list[str] | dict[str, int]]
"""The fields of one turn's ``[[step]]`` table."""


def _step(turn: Turn, flag: bool, pin: bool, tokens: int | None) -> Step:
    """The step of ``turn``: salient when ``flag``, pinned when ``pin``, costing ``tokens``
    when it was measured outside memtape."""
    step: Step = {"turn": turn.role, "text": turn.text}
    if flag != (turn.role == "tool"):
        step["salient"] = flag
    if turn.calls:
        step["calls"] = list(turn.calls)
    if turn.answers:
        step["answers"] = list(turn.answers)
    if pin:
        step["pin"] = True
    if turn.usage is not None:
        step["usage"] = turn.usage.table()
    if tokens is not None:
        step["tokens"] = tokens
    return step


def _recorded(transcript: Transcript, budget: int, tokenizer: str) -> RecordedCompaction:
    """The recorded policy of the transcript's compactions."""
    compactions = tuple(
        CompactionRecord(
            c.before,
            c.summary,
            c.trigger,
            c.pre_tokens,
            c.post_tokens,
            c.preserved,
            folded=c.folded,
            dropped=c.dropped,
            cleared=c.cleared,
            label=c.label,
        )
        for c in transcript.compactions
    )
    return RecordedCompaction(budget, compactions, tokenizer_named(tokenizer))


def _comment(
    transcript: Transcript, name: str, rule: str, pin: str, *, hot_n: int, compared: Sequence[str]
) -> str:
    lines = [
        f"Imported from {name} ({transcript.format}): {len(transcript.turns)} turns, "
        f"{transcript.calls} tool calls, {transcript.answers} tool results.",
        f"Salient: {rule.strip()}; pinned: {pin}.",
    ]
    count = len(transcript.compactions)
    if count:
        lines.append(
            f"The transcript recorded {count} compaction{'s' if count != 1 else ''}, which the "
            "recorded policy applies; bench it beside others with "
            f"--policy recorded --policy tiered:hot_n={hot_n}."
        )
    lines.extend(compared)
    lines.extend(transcript.notes)
    return "\n".join(lines)


def _check_roles(roles: frozenset[str], present: set[str], path: Path, option: str) -> None:
    """Refuse an option naming a role no turn has, saying which roles the transcript has."""
    missing = sorted(roles - present)
    if missing:
        listed = ("the role " if len(missing) == 1 else "the roles ") + ", ".join(
            repr(role) for role in missing
        )
        raise BadInput(
            f"{path}: {option}: no message has {listed} "
            f"(the file's roles: {', '.join(sorted(present))})"
        )
