"""``memtape audit``: what each policy's compactions lost of a session, by probe kind.

A scenario (a shipped name or a ``.toml`` file, an imported session) is run
in memory under its own compaction policy, or under each ``--policy``; a
recorded run is audited as it was recorded, or re-decided from its commands
under each ``--policy``. The probes are the scenario's own (``--probes auto``
or ``FILE`` in their place); a run file carries none, so its probes are
``--probes auto``'s unless a file is given.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

from memtape.commandline.opening import open_run
from memtape.commandline.output import print_json, print_lines
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, NothingToApply, Rejected
from memtape.core.plural import counted
from memtape.core.run import Run
from memtape.lab.bench import Cell, parse_policy, policies_for
from memtape.lab.choices import AUTO
from memtape.lab.loss_table import AuditedPolicy, audit_data, audit_lines, kinds_shown
from memtape.lab.probes import auto_probes, probes_from_file
from memtape.policies.session import Policies, Session
from memtape.projections.losses import loss_audit
from memtape.scenarios import Probe, Scenario, is_scenario, load_scenario


def run(args: argparse.Namespace) -> int:
    """Audit the session under each policy and print the table (or ``--json``)."""
    scenario, recorded = _session(args)
    if scenario.policies.compaction is None:
        raise BadInput(f"{args.session}: no compaction policy, so nothing a compaction lost")
    turns = [step for step in scenario.steps if isinstance(step, AddTurn)]
    probes, origin = _probes(args.probes, scenario, turns)
    specs = [parse_policy(text) for text in args.policy]
    for spec in specs:
        if spec.axis != "compaction":
            raise BadInput(
                f"--policy {spec.label}: a {spec.axis} policy; the audit measures what "
                "compactions lose"
            )
    if specs:
        runs = [
            (spec.label, _decided(scenario, Cell(scenario.source, spec, (), ()))) for spec in specs
        ]
    else:
        compaction = scenario.policies.compaction
        own = (
            recorded
            if recorded is not None
            else _executed(scenario, scenario.policies, compaction.name)
        )
        runs = [(compaction.name, own)]
    audited = [AuditedPolicy(label, loss_audit(made, probes)) for label, made in runs]
    if args.json:
        print_json(audit_data(scenario.name, len(probes), audited))
        return 0
    rows = kinds_shown([probe.kind for probe in probes if probe.text is not None], audited)
    heading = f"{counted(len(probes), 'probe')} ({origin}), {counted(len(turns), 'turn')}"
    print_lines(audit_lines(scenario.name, heading, audited, rows))
    return 0


def _session(args: argparse.Namespace) -> tuple[Scenario, Run | None]:
    """The session to audit as a scenario, and the recorded run when it is a run file."""
    if is_scenario(args.session):
        return load_scenario(args.session), None
    loaded = open_run(args.session, trust=args.trust)
    if args.policy:
        loaded.require_code("re-decide under --policy")
    session = loaded.session
    scenario = Scenario(
        loaded.scenario,
        "",
        session.epochs[0].policies,
        session.run.commands,
        args.session,
    )
    return scenario, session.run


def _probes(
    spec: str | None, scenario: Scenario, turns: Sequence[AddTurn]
) -> tuple[list[Probe], str]:
    """The probes to audit against, and where they came from, in words."""
    if spec == AUTO or (spec is None and not scenario.probes):
        probes, origin = auto_probes(turns), "planted by --probes auto"
    elif spec is not None:
        probes, origin = probes_from_file(Path(spec), turns), f"from {spec}"
    else:
        probes, origin = list(scenario.probes), "the scenario's"
    if not probes:
        raise BadInput(
            f"{scenario.source}: no probes to audit: its turns hold nothing --probes auto plants"
        )
    return probes, origin


def _decided(scenario: Scenario, cell: Cell) -> Run:
    """The scenario's steps decided again under the cell's policy."""
    try:
        policies = policies_for(scenario, cell)
    except NothingToApply as error:
        reason = str(error).rpartition("nothing to apply")[2]
        raise BadInput(
            f"{scenario.source}: --policy {cell.spec.label}: nothing to apply{reason}"
        ) from None
    if policies is None:
        raise BadInput(f"{scenario.source}: no compaction policy to replace with {cell.spec.label}")
    return _executed(scenario, policies, cell.label)


def _executed(scenario: Scenario, policies: Policies, label: str) -> Run:
    """A run of the scenario's steps under ``policies``; a rejected step is named."""
    session = Session(policies)
    for number, command in enumerate(scenario.steps, start=1):
        try:
            session.execute(command)
        except Rejected as error:
            raise Rejected(f"{scenario.source}: step {number}, under {label}: {error}") from None
    return session.run
