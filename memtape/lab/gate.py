"""``bench --baseline FILE --fail-if RULE``: a sweep's cells held to rules, for CI.

A cell is matched to the baseline's by its scenario (its name), its policy and its
parameters (those with a value, compared as values: ``4`` and ``4.0`` are one).
Each rule (``memtape.lab.rules``) is tried on each cell; the gate fails when a cell
breaks one, and then names the cell, the metric, its value, the baseline's and the rule.
What cannot be compared is said and does not fail the gate: a cell the baseline lacks
(unless ``--fail-if-missing``), a metric null on either side. A cell whose policy did
not apply (the table says so) has no figures, and is not held to the rules.
"""

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.paths import read_regular, regular_file
from memtape.core.plural import counted
from memtape.core.visible import visible
from memtape.lab.bench import METRICS, Result
from memtape.lab.replicates import folded_groups
from memtape.lab.results_file import read_results
from memtape.lab.results_table import SUFFIX, check_tables, metrics, parameters, read_table
from memtape.lab.rules import Rule, parse_rule
from memtape.projections.billing.tally import COST_METRICS

Key = tuple[str, str, tuple[tuple[str, str], ...]]
"""What matches a cell to the baseline's: scenario, policy, and each parameter with a
value, as canonical JSON text, by name."""


@attrs.frozen
class Measured:
    """A cell's figures as the gate compares them, from this sweep or from a baseline."""

    scenario: str
    policy: str
    params: Mapping[str, Any]
    metrics: Mapping[str, Any]
    name: str
    """How the gate's lines name the cell: its scenario, policy and notable parameters, as
    the table shows them."""
    priced_as: str | None = None
    """The model its cost metrics were billed as (None: not priced, or not said)."""

    @property
    def key(self) -> Key:
        """What matches this cell to the baseline's."""
        params = tuple(
            sorted((name, _canonical(v)) for name, v in self.params.items() if v is not None)
        )
        return (self.scenario, self.policy, params)


def measured(result: Result) -> Measured:
    """A result of this sweep, as the gate compares it."""
    shown = " ".join(f"{name}={_param(value)}" for name, value in result.notable.items())
    named = (visible(result.policy), shown)
    name = f"{visible(result.scenario)}, {' '.join(filter(None, named))}"
    return Measured(
        result.scenario, result.policy, result.params or {}, result.metrics, name, result.priced_as
    )


def read_baseline(path: Path) -> list[Measured]:
    """The cells of the baseline at ``path``, by its ending: a table (``.parquet``), the
    ``bench --json`` file (``.json``) or a results file (JSONL, any other ending)."""
    regular_file(path, "baseline file")
    suffix = path.suffix.lower()
    if suffix == SUFFIX:
        check_tables(f"--baseline {path}")
        return [_from_row(path, number, row) for number, row in enumerate(read_table(path), 1)]
    if suffix == ".json":
        return _from_json(path)
    # A cell run --replicates times is compared as the sweep reports it: by its medians.
    once, replicated = [], defaultdict(list)
    for (scenario, policy, settings, replicate), result in read_results(path).items():
        if replicate is None:
            once.append(result)
        else:
            replicated[scenario, policy, settings].append(result)
    return [measured(result) for result in (*once, *folded_groups(replicated.values()))]


@attrs.frozen
class Verdict:
    """What the gate found: its lines, in order, and whether it failed."""

    lines: tuple[str, ...]
    failed: bool


@attrs.frozen
class Gate:
    """Rules, the baseline they may name, and whether a cell it lacks fails."""

    rules: tuple[Rule, ...]
    baseline: Path | None
    cells: Mapping[Key, Sequence[Measured]]
    """The baseline's cells by key, in its order."""
    fail_if_missing: bool = False

    def judge(self, results: Iterable[Result]) -> Verdict:
        """Hold each result whose policy applied to every rule; the lines that say what broke
        and what could not be compared, and a last one with the verdict."""
        lines: list[str] = []
        nulls: dict[str, list[str]] = defaultdict(list)
        checked = broke = missing = 0
        matched: dict[Key, int] = defaultdict(int)
        for result in results:
            if result.params is None:
                continue  # its policy did not apply: the table says so, and it has no figures
            cell = measured(result)
            checked += 1
            base = self._match(cell, matched[cell.key])
            matched[cell.key] += 1
            if self.baseline is not None and base is None:
                missing += 1
                lines.append(
                    f"missing from the baseline: {cell.name}"
                    if self.fail_if_missing
                    else f"not in the baseline: {cell.name} (new: not compared)"
                )
            said, broken = self._hold(cell, base, nulls)
            lines.extend(said)
            broke += broken
        for metric, names in nulls.items():
            lines.append(
                f"not compared: {metric} is null in {counted(len(names), 'cell')}: "
                f"{'; '.join(names)}"
            )
        failed = broke > 0 or (self.fail_if_missing and missing > 0)
        lines.append(self._summary(checked, broke, missing, failed))
        return Verdict(tuple(lines), failed)

    def _match(self, cell: Measured, before: int) -> Measured | None:
        """The cell's match in the baseline, or None (no baseline, or none there). A cell that
        comes again (a forgetting policy's, under a grid of compaction settings) is matched
        to the baseline's next one, after the ``before`` already matched."""
        found = self.cells.get(cell.key, ())
        return found[before] if before < len(found) else None

    def _hold(
        self, cell: Measured, base: Measured | None, nulls: dict[str, list[str]]
    ) -> tuple[list[str], bool]:
        """Hold one cell to every rule, against ``base``: the lines it gives, and whether it
        broke a rule; a metric null on both sides (or here, with nothing to compare it
        with) is added to ``nulls``, said once for every cell."""
        lines: list[str] = []
        broken = False
        for metric in dict.fromkeys(rule.metric for rule in self.rules):
            rules = [rule for rule in self.rules if rule.metric == metric]
            value = cell.metrics.get(metric)
            before = None if base is None else base.metrics.get(metric)
            if value is None and before is None:
                nulls[metric].append(cell.name)
                continue
            if value is None:
                lines.append(_one_null(cell, metric, value, before))
                continue
            if base is not None and before is None and any(rule.relative for rule in rules):
                lines.append(_one_null(cell, metric, value, before))
            if not (_number(value) and (before is None or _number(before))):
                lines.append(f"not compared: {cell.name}: {metric} is not a number")
                continue
            for rule in rules:
                if rule.relative and before is None:
                    continue
                if rule.fails(value, before if rule.relative else None):
                    lines.append(_regressed(cell, rule, value, before) + _priced(cell, base, rule))
                    broken = True
        return lines, broken

    def _summary(self, checked: int, broke: int, missing: int, failed: bool) -> str:
        """The verdict's line. A pass says how many cells the baseline lacked: a baseline
        of other sessions matches nothing, and would otherwise pass unseen."""
        against = "" if self.baseline is None else f", against {self.baseline}"
        rules = counted(len(self.rules), "rule")
        if not failed:
            cells = counted(checked, "cell")
            lacked = f", {missing} not in the baseline" if missing else ""
            return f"gate: passed: no cell breaks a rule ({cells}{lacked}, {rules}{against})"
        parts = []
        if broke:
            parts.append(f"{broke} of {counted(checked, 'cell')} broke a rule")
        if missing:
            parts.append(
                f"{missing} {'missing from' if self.fail_if_missing else 'not in'} the baseline"
            )
        return f"gate: failed: {', '.join(parts)} ({rules}{against})"


def prepare_gate(
    texts: Sequence[str], baseline: Path | None, *, fail_if_missing: bool = False
) -> Gate | None:
    """The gate the options ask for, every rule read and the baseline loaded (nothing has
    run yet), or None when they ask for none; refused as bad input when malformed."""
    if not texts:
        if baseline is not None:
            raise BadInput(f"--baseline {baseline}: give --fail-if RULE, what a cell must not do")
        if fail_if_missing:
            raise BadInput("--fail-if-missing needs --baseline FILE and --fail-if RULE")
        return None
    rules = tuple(parse_rule(text, METRICS) for text in texts)
    if baseline is None:
        relative = next((rule for rule in rules if rule.relative), None)
        if relative is not None:
            raise BadInput(f"--fail-if {relative.text!r}: it names baseline: give --baseline FILE")
        if fail_if_missing:
            raise BadInput("--fail-if-missing needs --baseline FILE")
        return Gate(rules, None, {}, fail_if_missing)
    cells: dict[Key, list[Measured]] = defaultdict(list)
    for number, cell in enumerate(read_baseline(baseline), start=1):
        try:
            key = cell.key
        except RecursionError:  # a crafted file's parameters, lists inside lists
            raise BadInput(
                f"{baseline}: cell {number}: its parameters nest too deep to compare"
            ) from None
        cells[key].append(cell)
    return Gate(rules, baseline, dict(cells), fail_if_missing)


def _from_row(path: Path, number: int, row: Mapping[str, Any]) -> Measured:
    """A table's row as the gate compares it."""
    scenario, policy = row.get("scenario"), row.get("policy")
    if not (isinstance(scenario, str) and isinstance(policy, str)):
        raise BadInput(f"{path}: row {number}: its scenario or policy is not text")
    label = row.get("label")
    name = f"{scenario}, {label if isinstance(label, str) else policy}"
    return Measured(scenario, policy, parameters(row), metrics(row), name, _model(row))


def _from_json(path: Path) -> list[Measured]:
    """The cells of a ``bench --json`` file."""
    raw = read_regular(path, "bench --json file")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise BadInput(f"{path}: not JSON: {error}") from None
    found = data.get("results") if isinstance(data, dict) else None
    if not isinstance(found, list):
        raise BadInput(f"{path}: not the JSON of memtape bench: it holds no 'results' list")
    cells = []
    for number, entry in enumerate(found, start=1):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("scenario"), str)
            and isinstance(entry.get("policy"), str)
            and isinstance(entry.get("params") or {}, dict)
            and isinstance(entry.get("metrics"), dict)
        ):
            raise BadInput(
                f"{path}: result {number}: not a cell's result: it holds scenario, policy, "
                "params and metrics"
            )
        scenario, policy = entry["scenario"], entry["policy"]
        name = f"{scenario}, {policy}"
        params, figures = entry["params"] or {}, entry["metrics"]
        cells.append(Measured(scenario, policy, params, figures, name, _model(entry)))
    return cells


def _regressed(cell: Measured, rule: Rule, value: Any, before: Any) -> str:
    """The line that names a cell breaking ``rule``."""
    if not rule.relative:
        return f"regressed: {cell.name}: {rule.metric} is {_shown(value)}: breaks {rule.text!r}"
    return (
        f"regressed: {cell.name}: {rule.metric} is {_shown(value)}, the baseline "
        f"{_shown(before)}: breaks {rule.text!r} ({_shown(value)} {rule.comparison} "
        f"{rule.expression(before)})"
    )


def _priced(cell: Measured, base: Measured | None, rule: Rule) -> str:
    """What a cost rule's regression adds when the two sides were billed as different
    models (cells are matched without it): the models, so the cause is not hunted for."""
    if base is None or not rule.relative or rule.metric not in COST_METRICS:
        return ""
    if cell.priced_as == base.priced_as:
        return ""
    here, there = (
        visible(m) if m is not None else "no model" for m in (cell.priced_as, base.priced_as)
    )
    return f"; priced as {here} here, as {there} in the baseline"


def _model(found: Mapping[str, Any]) -> str | None:
    """The model a baseline's cell was priced as, when it says one."""
    model = found.get("priced_as")
    return model if isinstance(model, str) else None


def _one_null(cell: Measured, metric: str, value: Any, before: Any) -> str:
    """The line that says a metric is null on one side only."""
    where = f"not compared: {cell.name}: {metric} is null"
    if value is None:
        return f"{where} here ({_shown(before)} in the baseline)"
    return f"{where} in the baseline ({_shown(value)} here)"


def _number(value: Any) -> bool:
    """Whether a rule can compare ``value`` (a boolean counts as 0 or 1): not NaN, which
    every comparison calls false, so a rule against it would pass unseen, nor infinite."""
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _shown(value: Any) -> str:
    """A metric's value as the gate's lines show it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return visible(str(value))


def _param(value: Any) -> str:
    """A parameter in a cell's name: a list by how many items it holds (as the table)."""
    if isinstance(value, list):
        return str(len(value))
    text = visible(str(value))
    return f'"{text}"' if isinstance(value, str) and (not value or " " in value) else text


def _canonical(value: Any) -> str:
    """``value`` as JSON text that is the same for equal values: keys sorted, a whole float
    written as the integer it equals (a table's double column gives ``4.0`` for ``4``)."""
    return json.dumps(_plain(value), sort_keys=True, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
