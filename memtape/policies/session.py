"""A session: policies deciding commands over a run.

``Policies`` bundles one policy per axis and routes each command to the one
that decides it; ``Session`` appends what they decide to a ``Run``.
A run only read (``memtape show``) imports none of what decides a clock, a
recall or a block, nor what changes settings.
"""

import sys
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

import attrs

from memtape.core.codec import event_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Ask,
    Command,
    Consolidate,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import CompactionTriggered, Event, TurnAdded
from memtape.core.logs import debug_enabled, get_logger
from memtape.core.plural import noun_for
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import State
from memtape.policies.plumbing.building import Building, building
from memtape.policies.plumbing.imports import import_path, is_import_path, policy_class
from memtape.policies.zoo import AXES, LLM, SHARED
from memtape.reducers import evolve, fold

if TYPE_CHECKING:
    from memtape.llm.config import ModelConfig
    from memtape.policies.plumbing import protocols
    from memtape.policies.unimported import Unimported
    from memtape.policies.window.recall import Recaller

_STAND_INS = "memtape.policies.unimported"

P = TypeVar("P")


@attrs.frozen
class Policies:
    """One policy per axis (any may be absent), the model they may ask (``llm``), what a
    ``Recall`` searches with (``recall``, from the compaction table), and the routing."""

    compaction: "protocols.CompactionPolicy | None" = None
    forgetting: "protocols.ForgettingPolicy | None" = None
    consolidation: "protocols.ConsolidationPolicy | None" = None
    llm: "ModelConfig | None" = None
    recall: "Recaller | None" = attrs.field(default=None, kw_only=True)
    imports: bool = attrs.field(default=True, eq=False, kw_only=True)
    """Whether names given by import path were imported (False: read from a run file, and
    stood in for); ``with_settings`` builds the changed policies the same way."""

    def __attrs_post_init__(self) -> None:
        needs_store = self.consolidation is not None and self.consolidation.makes_semantic_facts()
        if needs_store and self.forgetting is None:
            raise BadInput("consolidation rules write facts, which needs a [forgetting] policy")

    @classmethod
    def from_params(
        cls,
        tables: Mapping[str, Any],
        where: str = "policies",
        *,
        imports: bool = True,
        recorded: str | None = None,
    ) -> "Policies":
        """Build the policies from ``{"compaction": {"policy": NAME, ...}, ...}``, and the
        model they may ask from an ``"llm"`` table (``{"model": NAME, ...}``).

        A policy named by import path is imported, unless ``imports`` is false
        (a run file's header, which is data): then a stand-in that knows only
        its table takes its place (``memtape.policies.unimported``); so does a
        summarizer named by import path (``memtape.policies.text.summarizers``).
        ``recorded`` names the run file an untrusted header was read from: its
        ``[llm]`` model and server are shown, never asked (``ModelConfig.recorded``).
        """
        unknown = set(tables) - {*AXES, LLM}
        if unknown:
            noun = noun_for(len(unknown), "section")
            raise BadInput(f"{where}: unknown {noun} {', '.join(sorted(unknown))}")
        llm = tables.get(LLM)
        if llm is not None and not isinstance(llm, Mapping):
            raise BadInput(f"{where}: [{LLM}] must be a table")
        config = None
        if llm is not None:
            from memtape.policies.plumbing.model_settings import model_config  # noqa: PLC0415 (a model)

            config = model_config(llm, f"{where}: [{LLM}]", strict=imports, recorded=recorded)
        with building(Building(config, imports)):
            built = cls._axes(tables, where, imports=imports)
        try:
            return cls(**built, llm=config, imports=imports)
        except BadInput as error:
            raise BadInput(f"{where}: {error}") from None

    @classmethod
    def _axes(cls, tables: Mapping[str, Any], where: str, *, imports: bool) -> dict[str, Any]:
        """Each axis's policy, built from its table."""
        built: dict[str, Any] = {}
        compaction = tables.get("compaction")
        if isinstance(compaction, Mapping) and "recall" in compaction:
            from memtape.policies.window.recall import recall_params  # noqa: PLC0415 (a recall tier)

            tables, built = recall_params(tables, where)
        for axis, known in AXES.items():
            table = tables.get(axis)
            if table is None:
                continue
            if not isinstance(table, Mapping):
                raise BadInput(f"{where}: [{axis}] must be a table")
            params = dict(table)
            name = params.pop("policy", None)
            if isinstance(name, str) and is_import_path(name) and not imports:
                from memtape.policies.unimported import STAND_INS  # noqa: PLC0415 (stand-ins only)

                built[axis] = STAND_INS[axis].from_table(name, params, f"{where}: [{axis}]")
                continue
            if isinstance(name, str) and is_import_path(name):
                policy = policy_class(name, f"{where}: [{axis}]")
            elif isinstance(name, str) and name in known:
                policy = known[name]
            else:
                from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

                names = ", ".join(sorted(known))
                hint = did_you_mean(name, known) if isinstance(name, str) else ""
                raise BadInput(
                    f"{where}: [{axis}] policy must be one of {names}, got {name!r}{hint}"
                )
            built[axis] = policy.from_params(params, f"{where}: [{axis}]")
        return built

    def unimported(self) -> tuple[str, ...]:
        """The import paths of the policies only stood in for (a run read as data)."""
        present = (self.compaction, self.forgetting, self.consolidation)
        return tuple(policy.path for policy in present if is_stand_in(policy))

    def params(self) -> dict[str, dict[str, Any]]:
        """Every present policy's parameters, by axis: what ``from_params`` reads back.

        A policy that is not the one registered under its name is named by
        its import path, so that the table builds it again.
        """
        present = {
            "compaction": self.compaction,
            "forgetting": self.forgetting,
            "consolidation": self.consolidation,
        }
        tables: dict[str, dict[str, Any]] = {}
        for axis, policy in present.items():
            if policy is None:
                continue
            table = dict(policy.params())
            if is_stand_in(policy):
                tables[axis] = table
                continue
            if AXES[axis].get(getattr(policy, "name", "")) is not type(policy):
                table["policy"] = import_path(type(policy))
            tables[axis] = table
        if self.llm is not None:
            tables[LLM] = self.llm.table()
        from memtape.policies.window.recall import with_recall  # noqa: PLC0415 (a write only)

        return with_recall(tables, self.recall)

    def with_settings(self, settings: Iterable[str]) -> "Policies":
        """These policies with ``AXIS.PARAM=VALUE`` settings applied, e.g. ``compaction.budget=60``.

        A value is read as a TOML value (``60``, ``4.5``, ``true``, ``"words"``), or
        as a plain string when it is not one; ``AXIS.policy=NAME`` changes the policy,
        which keeps the axis's shared parameters (``SHARED``) and defaults the rest.
        ``AXIS.summarizer=NAME`` drops the old summarizer's own parameters (its prompt), and
        ``compaction.warm=...`` / ``compaction.gist=...`` those of tiered's old choice.
        ``llm.PARAM=VALUE`` changes the model asked (``llm.model=gpt-4o-mini``), and
        makes an ``[llm]`` table if there was none. A run's recorded table (untrusted)
        stays the file's word until ``llm.model`` names the model: then the user chose
        it, and its server is ``llm.base_url`` if set, never the file's.
        """
        from memtape.policies import settings as rules  # noqa: PLC0415 (a change only)

        tables = self.params()
        recorded = self.llm.recorded if self.llm is not None else None
        chosen: set[str] = set()
        for setting in settings:
            name, sep, raw = setting.partition("=")
            axis, dot, param = name.strip().partition(".")
            if not sep or not dot or not param:
                raise BadInput(
                    f"--set {setting!r}: write AXIS.PARAM=VALUE, e.g. compaction.budget=60"
                )
            if axis == LLM:
                tables.setdefault(LLM, {})[param] = rules.setting_value(raw.strip(), name.strip())
                chosen.add(param)
                continue
            if axis not in AXES:
                from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

                raise BadInput(
                    f"--set {setting!r}: no axis {axis!r} (axes: {', '.join(AXES)}; "
                    f"and {LLM} for the model){did_you_mean(axis, [*AXES, LLM])}"
                )
            if axis not in tables:
                raise BadInput(f"--set {setting!r}: this scenario has no [{axis}] policy")
            value = rules.setting_value(raw.strip(), name.strip())
            if param == "policy" and value != tables[axis].get("policy"):
                tables[axis] = {k: v for k, v in tables[axis].items() if k in SHARED[axis]}
            if param in rules.CHOICES and value != tables[axis].get(param):
                for own in rules.choice_params(param):
                    tables[axis].pop(own, None)
            tables[axis][param] = value
        if recorded is not None and "model" in chosen:
            recorded = None
            # What the file named beside the model goes too: the user chose none of it.
            for param in ("base_url", "embedding_model"):
                if param not in chosen:
                    tables[LLM].pop(param, None)
        if "base_url" in chosen:
            rules.check_user_url(tables[LLM]["base_url"])
        return Policies.from_params(tables, "--set", imports=self.imports, recorded=recorded)

    def decide(self, state: State, command: Command) -> tuple[Event, ...]:
        """The events that honour ``command`` in ``state``, or ``Rejected`` saying why not."""
        if isinstance(command, AddTurn):
            compaction = self.compaction
            if compaction is None:
                raise Rejected("a turn needs a [compaction] policy, and this session has none")
            if self.recall is None:
                return compaction.decide(state, command)
            from memtape.policies.window.recall import kept_for_recall  # noqa: PLC0415 (a recall)

            return kept_for_recall(compaction.decide(state, command))
        if isinstance(command, WriteFact | ReadFact):
            return _require(self.forgetting, "a fact", "forgetting").decide(state, command)
        if isinstance(command, Query):
            return _require(self.forgetting, "a query", "forgetting").decide(state, command)
        if isinstance(command, AdvanceClock):
            from memtape.policies.store.expiry import advance, due  # noqa: PLC0415 (a clock)

            advanced = advance(state, command)
            return (advanced, *due(evolve(state, advanced)))
        if isinstance(command, RecordEpisode):
            return _require(self.consolidation, "an episode", "consolidation").decide(
                state, command
            )
        if isinstance(command, Consolidate):
            from memtape.policies.consolidation.passes import consolidate  # noqa: PLC0415
            from memtape.policies.window import blocks  # noqa: PLC0415 (a pass's edits)

            policy = _require(self.consolidation, "a consolidation pass", "consolidation")
            edits = partial(blocks.consolidated, self.compaction)
            return consolidate(policy, self.forgetting, edits, state, command)
        if isinstance(command, Recall):
            from memtape.policies.window.recall import decide_recall  # noqa: PLC0415 (a recall)

            return decide_recall(self.recall, self.compaction, state, command)
        if isinstance(command, Ask):
            from memtape.policies.text.answering import decide_ask  # noqa: PLC0415 (a model's client)

            return decide_ask(state, command, chosen=self.imports)
        from memtape.policies.window import blocks  # noqa: PLC0415 (a block, or unknown)

        return blocks.decide(self.compaction, state, command)


def is_stand_in(policy: object) -> TypeGuard["Unimported"]:
    """Whether ``policy`` is a stand-in (``unimported.Unimported``), importing nothing: none
    exists before its module is imported."""
    module = sys.modules.get(_STAND_INS)
    return module is not None and isinstance(policy, module.Unimported)


def _require(policy: P | None, what: str, axis: str) -> P:
    if policy is None:
        raise Rejected(f"{what} needs a [{axis}] policy, and this session has none")
    return policy


@attrs.frozen
class Epoch:
    """The policies in force from the event after ``start`` on (a fork starts a new epoch)."""

    start: int
    policies: Policies


class Session:
    """Commands in, policies decide, events appended to the run, state folded."""

    def __init__(
        self,
        policies: Policies,
        *,
        run: Run | None = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
        epochs: Sequence[Epoch] = (),
    ) -> None:
        self.policies = policies
        self.run = run if run is not None else Run(fold, snapshot_every=snapshot_every)
        self.epochs: tuple[Epoch, ...] = tuple(epochs) or (Epoch(0, policies),)

    def policies_at(self, position: int) -> Policies:
        """The policies that decided the event at 1-based ``position`` (0: the first ones).

        A run forked with other settings has more than one epoch; the state
        after ``position`` events is measured against the policies that made it.
        """
        starts = [epoch.start for epoch in self.epochs]
        return self.epochs[max(bisect_left(starts, position) - 1, 0)].policies

    def fork(self, at: int, settings: Sequence[str]) -> "Session":
        """A new session that keeps the first ``at`` events and re-decides the rest.

        ``at`` must fall between two commands; the remaining commands are
        decided again under the policies in force there with ``settings``
        applied (``compaction.budget=60``). This session is not changed.
        """
        run = self.run
        ends = [0, *(run.batch(step)[1] for step in range(1, run.steps + 1))]
        if at not in ends:
            before = max(end for end in ends if end < at) if at > 0 else 0
            after = min((end for end in ends if end > at), default=len(run))
            raise BadInput(
                f"event {at} falls inside a command; a fork starts between commands "
                f"(the nearest are {before} and {after})"
            )
        from memtape.llm.client import NotChosen  # noqa: PLC0415 (the cache's sqlite3 on a fork only)

        # The policies that decided the first re-decided event (a fork of a
        # fork at the same point starts from the first fork's settings).
        policies = self.policies_at(at + 1).with_settings(settings)
        kept = ends.index(at)
        epochs = [epoch for epoch in self.epochs if epoch.start < at]
        forked = Session(policies, epochs=[*epochs, Epoch(at, policies)])
        commands = run.commands
        for step in range(1, kept + 1):
            start, end = run.batch(step)
            forked.run.append(commands[step - 1], run.events[start:end])
        for step in range(kept + 1, run.steps + 1):
            try:
                forked.execute(commands[step - 1])
            except NotChosen:
                raise  # it names the run and what to do, whatever the step
            except Rejected as error:
                raise BadInput(f"step {step}, re-decided after the fork: {error}") from None
        return forked

    @property
    def state(self) -> State:
        """The state after every command so far."""
        return self.run.state

    def execute(self, command: Command) -> tuple[Event, ...]:
        """Decide ``command`` and append its events; a rejection changes nothing."""
        before = self.run.state
        events = self.policies.decide(before, command)
        self.run.append(command, events)
        if debug_enabled():
            self._log(before, events)
        return events

    def execute_all(self, commands: Iterable[Command]) -> None:
        """Execute each command in order."""
        for command in commands:
            self.execute(command)

    def _log(self, before: State, events: tuple[Event, ...]) -> None:
        """One entry per event, with the numbers that decided it."""
        compaction = self.policies.compaction
        step, position = self.run.steps, len(self.run) - len(events)
        state, log = before, get_logger()
        for event in events:
            position += 1
            numbers = event_data(event)
            after = evolve(state, event)
            if compaction is not None and isinstance(event, TurnAdded | CompactionTriggered):
                numbers.update(
                    window_before=state.window.tokens,
                    window_after=after.window.tokens,
                    budget=compaction.budget,
                )
            state = after
            log.debug(type(event).__name__, at=position, step=step, clock=state.clock, **numbers)
