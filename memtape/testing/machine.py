"""The kit's state machine: random sessions thrown at one policy, checked after every step.

Subclass ``PolicyMachine``, name the policy (its class, its import path, or
a registered name), and run its ``TestCase``::

    class KeepLastMachine(PolicyMachine):
        policy = "examples.keep_last:KeepLast"

    TestKeepLast = KeepLastMachine.TestCase

After every command it checks what every policy owes (the fold, the codec
round trip, a rejection leaving no trace, determinism under another wall
clock and random state, a ranking of exactly the active facts, replay
equality) and what the policy promises (``memtape.policy.PROMISES``), with
the same functions ``memtape check`` uses. A broken invariant raises
``InvariantBroken`` and saves the session so far as a scenario file; the last
one saved is the minimal counterexample hypothesis shrank to. Once every
session has run, a compaction policy that marked every drawn turn alike
(tool results and the rest, all salient or all chatter) fails with
``SalienceNeverVaries`` (``memtape.testing.salience``).
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs

from memtape.checking.invariants import Violation
from memtape.core.commands import (
    BLOCK_OPS,
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput
from memtape.core.state import State
from memtape.policies.session import Policies
from memtape.testing import strategies as kit
from memtape.testing.case import MachineCase
from memtape.testing.checked import CheckedSession, shortest
from memtape.testing.counterexamples import InvariantBroken, save_counterexample
from memtape.testing.requires import hypothesis_missing
from memtape.testing.salience import OPT_OUT, DrawnSalience
from memtape.testing.under_test import axis_of, policy_name

try:
    from hypothesis import strategies as st
    from hypothesis.control import current_build_context
    from hypothesis.errors import InvalidArgument
    from hypothesis.stateful import (
        RuleBasedStateMachine,
        initialize,
        invariant,
        precondition,
        rule,
    )
except ImportError as error:  # pragma: no cover (the test extra installs it)
    raise ImportError(hypothesis_missing()) from error

BLOCK_LABELS = ("human", "persona")
"""The labels the kit's memory blocks take: few, so creations collide and edits find one."""

BLOCK_TEXT = st.characters(codec="utf-8")
"""The characters of the kit's block texts."""

PROMPT = "You are the refund desk: refunds within 30 days, a 10% fee after that."
"""The pinned system prompt a compaction session starts with, half the time."""

COMPANION_FORGETTING = "importance-recency-access"
"""The forgetting policy beside a consolidation policy under test (distilled facts need one)."""


def _final() -> bool:
    """Whether this run is the one hypothesis reports (or runs outside hypothesis at all)."""
    try:
        return current_build_context().is_final
    except InvalidArgument:
        return True


class PolicyMachine(RuleBasedStateMachine):
    """Drives a session of random commands under one policy, checking after every step.

    Set ``policy`` (a class, ``"mypkg.module:Policy"`` or a registered name);
    ``axis`` when the policy does not say; ``params``, any parameters besides
    the budget (compaction) or capacity (forgetting) the kit draws; ``llm``,
    the ``[llm]`` table of a policy that asks a model (``{"model": ..., "base_url":
    ...}``); and ``counterexamples``, the directory a counterexample is saved in.

    ``TestCase`` runs it (``run_kit``). A compaction policy whose salience is
    constant by design (every turn salient, say, whatever its role) sets
    ``salience_may_be_constant = True`` on its own class, and the kit does
    not hold it to varying.
    """

    policy: ClassVar[Any] = None
    axis: ClassVar[str | None] = None
    params: ClassVar[Mapping[str, Any]] = {}
    llm: ClassVar[Mapping[str, Any] | None] = None
    counterexamples: ClassVar[Path | str | None] = None
    drawn: ClassVar[DrawnSalience] = DrawnSalience()
    """The salience the policy decided for the drawn turns left to it, in this run so far."""

    # hypothesis types TestCase as its own private case class; ours is a unittest case too.
    TestCase = MachineCase()  # type: ignore[assignment]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.drawn = DrawnSalience()

    def __init__(self) -> None:
        super().__init__()
        owner = type(self)
        self.served = axis_of(owner.policy, owner.axis)
        self.name = policy_name(owner.policy, self.served)
        self.checked = CheckedSession(Policies())
        self.failed = False
        self.judges_salience = False

    # -- the session -------------------------------------------------------------------------

    @initialize(
        budget=kit.budgets(), capacity=kit.capacities(), prompt=st.booleans(), data=st.data()
    )
    def start(self, budget: int, capacity: int, prompt: bool, data: st.DataObject) -> None:
        """A fresh session under the policy, with a drawn budget or capacity; a compaction
        session starts half the time with a pinned system prompt. A compaction policy that
        takes a trigger and a target (``memtape.policies.window.trigger``) gets drawn ones
        half the time, and recall (``recall = "bm25"``) half the time."""
        tables = self.tables(budget, capacity)
        if self.served == "compaction" and data.draw(st.booleans(), label="recall"):
            tables[self.served] = {**tables[self.served], "recall": "bm25"}
        where = f"{self.name} built by the kit"
        policies = Policies.from_params(tables, where)
        if self.served == "compaction" and hasattr(policies.compaction, "trigger"):
            drawn = data.draw(kit.triggers(budget), label="trigger")
            if drawn:
                tables[self.served] = {**drawn, **tables[self.served]}
                policies = Policies.from_params(tables, where)
        self.checked = CheckedSession(policies)
        constant = getattr(self.checked.policies.compaction, OPT_OUT, False) is True
        self.judges_salience = self.served == "compaction" and not constant
        if self.served == "compaction" and prompt:
            self.step(
                AddTurn("system", "the policy is the policy: refunds within 30 days", pin=True)
            )

    @property
    def budget(self) -> int | None:
        """The budget of the compaction policy under test (None on the other axes)."""
        compaction = self.checked.policies.compaction
        budget = getattr(compaction, "budget", None)
        return budget if isinstance(budget, int) and not isinstance(budget, bool) else None

    def tables(self, budget: int, capacity: int) -> dict[str, dict[str, Any]]:
        """The scenario tables that build the policy under test (and any it needs beside it)."""
        table: dict[str, Any] = {"policy": self.name}
        if self.served == "compaction":
            table["budget"] = budget
        elif self.served == "forgetting":
            table["capacity"] = capacity
        table.update(type(self).params)
        tables = {self.served: table}
        if type(self).llm is not None:
            tables["llm"] = dict(type(self).llm or {})
        if self.served == "consolidation":
            tables["forgetting"] = {"policy": COMPANION_FORGETTING, "capacity": capacity}
        return tables

    @property
    def state(self) -> State:
        """The live state of the session."""
        return self.checked.session.state

    def step(self, command: Command) -> None:
        """Execute ``command`` and check everything that applies."""
        self.report(self.checked.execute(command))

    # -- the rules ---------------------------------------------------------------------------

    @precondition(lambda self: self.served == "compaction")
    @rule(data=st.data())
    def add_turn(self, data: st.DataObject) -> None:
        """A turn sized against the budget, calling tools or answering the calls that wait;
        now and then one the policy should refuse (a bad role, an answer no call waits on).
        What the policy decided of a turn left to it is counted (``drawn``)."""
        command = data.draw(kit.turns_for(self.state.window, self.budget))
        self.step(command)
        if command.salient is None and self.judges_salience:
            type(self).drawn.record(self.checked.decided)

    @precondition(lambda self: self.checked.policies.recall is not None)
    @rule(data=st.data(), k=st.integers(1, 4))
    def recall(self, data: st.DataObject, k: int) -> None:
        """A recall asking with a few words of a recent turn that left the window (or of
        none yet); under RECALL_BUDGET it never takes the window over budget."""
        left = list(self.state.window.left)[-20:]
        texts = [text for _, text, _ in left] or ["refund"]
        text = data.draw(st.sampled_from(texts), label="recalled from")
        self.step(Recall(" ".join(text.split()[:3]), k))

    @precondition(lambda self: self.served != "compaction")
    @rule(move=kit.clock_steps(nan=False))
    def advance(self, move: kit.ClockStep) -> None:
        """The clock moves on (or, now and then, back or to infinity, which is refused)."""
        self.step(AdvanceClock(self.state.clock + move.delta))

    @precondition(lambda self: self.served == "compaction")
    @rule(
        label=st.sampled_from(BLOCK_LABELS),
        limit=st.integers(0, 120),
        value=st.text(BLOCK_TEXT, max_size=60),
        read_only=st.booleans(),
    )
    def create_block(self, label: str, limit: int, value: str, read_only: bool) -> None:
        """A memory block is created (a label taken, a limit below 1 or a value past it is
        refused), read-only or not; its tokens count against the budget from now on, and
        under BLOCK_LIMIT a read-only one is never edited."""
        self.step(CreateBlock(label, limit, value, read_only))

    @precondition(lambda self: self.served == "compaction")
    @rule(
        label=st.sampled_from(BLOCK_LABELS),
        op=st.sampled_from((*BLOCK_OPS, "insert")),
        text=st.text(BLOCK_TEXT, max_size=80),
        data=st.data(),
    )
    def edit_block(self, label: str, op: str, text: str, data: st.DataObject) -> None:
        """A memory block is edited, replaced, appended to or found-and-replaced in (an edit
        past its limit, of no block, or finding nothing is refused); under BLOCK_LIMIT no
        block is ever over its limit."""
        block = self.state.window.block(label)
        find = ""
        if op == "find-replace":
            value = block.value if block is not None else ""
            start = data.draw(st.integers(0, len(value)), label="find start")
            find = value[start : start + data.draw(st.integers(0, 8), label="find length")]
        self.step(EditBlock(label, op, text, find))

    @precondition(lambda self: self.served != "compaction")
    @rule(command=kit.write_facts(nan=False))
    def write(self, command: WriteFact) -> None:
        """A fact is written, on a small set of keys so writes collide."""
        self.step(command)

    @precondition(lambda self: self.served != "compaction")
    @rule(command=kit.write_facts(nan=False), lifetime=st.floats(0.0, 30.0))
    def write_expiring(self, command: WriteFact, lifetime: float) -> None:
        """A fact written to expire ``lifetime`` from now (0: at once, which is refused);
        under EXPIRES no later command ranks, reads or returns it after its time."""
        self.step(attrs.evolve(command, expires_at=self.state.clock + lifetime))

    @precondition(lambda self: self.served != "compaction")
    @rule(command=kit.write_facts(nan=False), start=st.floats(-30.0, 30.0))
    def write_valid_from(self, command: WriteFact, start: float) -> None:
        """A fact written as true from ``start`` away from now (before or after), which
        closes the validity of what it supersedes there."""
        self.step(attrs.evolve(command, valid_from=self.state.clock + start))

    @precondition(lambda self: self.served != "compaction")
    @rule(back=st.floats(0.0, 40.0), earlier=st.floats(0.0, 40.0), k=st.integers(1, 4))
    def query_as_of(self, back: float, earlier: float, k: int) -> None:
        """A bi-temporal query, as of a valid time, as known at a record time no later than
        now; under VALID_AS_OF it returns no fact outside its validity."""
        clock = self.state.clock
        self.step(Query("", "", k, as_of=clock - back, known_at=max(0.0, clock - earlier)))

    @precondition(lambda self: self.served != "compaction")
    @rule(command=kit.read_facts())
    def read(self, command: ReadFact) -> None:
        """A read by key or id, of a fact that may or may not be there."""
        self.step(command)

    @precondition(lambda self: self.served != "compaction" and bool(self.state.store.active))
    @rule(data=st.data(), by_key=st.booleans())
    def read_active(self, data: st.DataObject, by_key: bool) -> None:
        """A read of a fact that is active."""
        store = self.state.store
        fact = store.facts[data.draw(st.sampled_from(sorted(store.active)))]
        self.step(ReadFact(key=fact.key) if by_key else ReadFact(id=fact.id))

    @precondition(lambda self: self.served == "consolidation")
    @rule(command=kit.record_episodes())
    def record_episode(self, command: RecordEpisode) -> None:
        """An episode waits for the next pass."""
        self.step(command)

    @precondition(lambda self: self.served == "consolidation")
    @rule()
    def consolidate(self) -> None:
        """A sleep-time pass."""
        self.step(Consolidate())

    # -- the checks --------------------------------------------------------------------------

    @invariant()
    def replays(self) -> None:
        """The log folded event by event equals the session's state."""
        self.report(self.checked.replays())

    def teardown(self) -> None:
        """The whole log folds from scratch to the end state and re-decides to itself."""
        if not self.failed:
            self.report(self.checked.finish())

    def report(self, violations: Sequence[Violation]) -> None:
        """Nothing, or save the shortest session that breaks the first violation's invariant
        and raise ``InvariantBroken``."""
        if not violations:
            return
        self.failed = True
        first = min(violations, key=lambda v: v.position)
        steps = self.checked.steps
        if not _final():
            # While hypothesis shrinks, a failure only needs to fail; the scenario is
            # shortened and saved once, for the minimal example it replays last.
            raise InvariantBroken(self.name, first, None, len(steps), "not the final example")
        steps = shortest(self.checked.policies, steps, first.invariant)
        try:
            path: Path | None = self.save(first, steps)
            why = ""
        except (OSError, BadInput) as error:
            path, why = None, str(error)
        raise InvariantBroken(self.name, first, path, len(steps), why)

    def save(self, violation: Violation, steps: Sequence[Command]) -> Path:
        """Write the session as a scenario file that ``memtape run`` replays; its path."""
        return save_counterexample(
            type(self).counterexamples, self.name, self.checked.policies, violation, steps
        )
