"""A sweep's results as one Parquet table, for DuckDB, pandas or anything that reads Parquet.

One row per cell, in the order the JSON results list them: its scenario (``scenario``,
its name; ``source``, as the command named it), its policy (``policy``; ``label``, as
the table shows it, grid point included), the ``axis`` the policy is on, its
``settings`` (the ``--set`` ones, then its grid point) and ``idle`` (why its policy had
nothing to apply, or null); then, when the sweep had them, ``judge`` (the ``--judge``
model), ``probes`` (the ``--probes`` file), ``replicates`` (how many runs a row
folds) and ``priced_as`` (the model the cost metrics were billed as); then one
``param.AXIS.NAME`` column per parameter and one ``metric.NAME`` column per metric,
whatever parameters and metrics the results hold (a replicated row's metric is the
median of its runs). A replicated row then has, per metric with a spread,
``spread.NAME.low``, ``spread.NAME.high`` and ``spread.NAME.interval`` (``range`` or
``percentile-95``), and ``within_spread.NAME``, the labels of the policies whose spread
overlaps it; a judged row has ``answers``, each question asked with its reply, verdict
and model calls (``Verdict.data``).

A column's type follows its values: boolean, integer, double (integers and floats
mixed, or no value at all), string; any other mix, and lists and tables, are JSON text,
the column marked ``memtape.encoding = json`` so that ``read_table`` gives the values
back. pyarrow is the ``results`` extra, imported only when a table is written or read.
"""

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memtape._version import __version__
from memtape.core.atomic import atomic_file
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.lab.bench import Cell, Result

FORMAT = "memtape-bench-table"
"""The ``memtape.format`` of a table's metadata."""

VERSION = 1
"""The ``memtape.version`` of a table's metadata."""

EXTRA = "results"
"""The optional extra that installs pyarrow."""

SUFFIX = ".parquet"
"""The ending of a file name that asks for a table rather than JSONL results."""

PARAM = "param."
"""The start of a parameter's column: ``param.AXIS.NAME``."""

METRIC = "metric."
"""The start of a metric's column: ``metric.NAME``."""

LEADING = ("scenario", "source", "policy", "label", "axis", "settings", "idle")
"""The columns every table starts with, naming its cell."""

SWEPT = ("judge", "probes", "replicates", "priced_as")
"""The columns after ``LEADING`` that a sweep with ``--judge``, ``--probes`` or
``--replicates``, or with a priced model, has."""

SPREAD = "spread."
"""The start of a replicated metric's interval columns: ``spread.NAME.low`` and so on."""

WITHIN = "within_spread."
"""The start of the column of the policies whose spread of a metric overlaps a row's."""

ANSWERS = "answers"
"""The column of a judged row's answers."""

ENCODING = b"memtape.encoding"
"""The field metadata that marks a column of JSON text."""

_INT64 = range(-(2**63), 2**63)


def table_rows(cells: Sequence[Cell], results: Sequence[Result]) -> list[dict[str, Any]]:
    """The rows of the table of ``results``, each that of the cell at the same position (a
    row holds only the columns its cell has a value or a parameter for)."""
    rows = []
    for cell, result in zip(cells, results, strict=True):
        axis = cell.spec.axis
        row: dict[str, Any] = {
            "scenario": result.scenario,
            "source": cell.scenario,
            "policy": result.policy,
            "label": result.label,
            "axis": axis,
            "settings": list(cell.settings),
            "idle": result.idle,
        }
        swept: dict[str, str | int | None] = {"judge": cell.judge, "probes": cell.probes}
        if result.spread is not None:
            swept["replicates"] = result.spread.replicates
        swept["priced_as"] = result.priced_as
        row.update({name: value for name, value in swept.items() if value is not None})
        row.update({f"{PARAM}{axis}.{name}": v for name, v in (result.params or {}).items()})
        row.update({f"{METRIC}{name}": value for name, value in result.metrics.items()})
        row.update(_spread_columns(result))
        if result.verdicts:
            row[ANSWERS] = [verdict.data() for verdict in result.verdicts]
        rows.append(row)
    return rows


def _spread_columns(result: Result) -> dict[str, Any]:
    """A replicated result's intervals and overlaps, by column (none for a result run once)."""
    if result.spread is None:
        return {}
    columns: dict[str, Any] = {}
    for name, spread in result.spread.spreads.items():
        columns[f"{SPREAD}{name}.low"] = spread.low
        columns[f"{SPREAD}{name}.high"] = spread.high
        columns[f"{SPREAD}{name}.interval"] = spread.interval
    for name, labels in result.spread.within.items():
        columns[f"{WITHIN}{name}"] = list(labels)
    return columns


def check_tables(option: str) -> None:
    """Refuse, as bad input naming ``option``, when pyarrow is not installed."""
    _arrow(option)


def write_table(path: Path, cells: Sequence[Cell], results: Sequence[Result]) -> None:
    """Write the table of ``results`` (those of ``cells``) to ``path``, whole or not at all."""
    pa = _arrow(f"--results {path}")
    import pyarrow.parquet as pq  # noqa: PLC0415 (the extra, checked above)

    rows = table_rows(cells, results)
    seen = list(dict.fromkeys(name for row in rows for name in row))
    # The parameters of every axis before the metrics, whichever row came first.
    names = [*LEADING, *(n for n in SWEPT if n in seen), *(n for n in seen if n.startswith(PARAM))]
    names.extend(n for n in seen if n.startswith(METRIC))
    names.extend(n for n in seen if n.startswith(SPREAD))
    names.extend(n for n in seen if n.startswith(WITHIN))
    names.extend(n for n in (ANSWERS,) if n in seen)
    fields, arrays = [], []
    for name in names:
        values = [row.get(name) for row in rows]
        if name == "settings":
            kind, encoded = pa.list_(pa.string()), False
        elif name in LEADING:
            kind, encoded = pa.string(), False
        else:
            kind, encoded = _kind(pa, values)
        if encoded:
            values = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
        fields.append(pa.field(name, kind, metadata={ENCODING: b"json"} if encoded else None))
        arrays.append(pa.array(values, type=kind))
    metadata = {
        "memtape.format": FORMAT,
        "memtape.version": str(VERSION),
        "memtape": __version__,
    }
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=metadata))
    with atomic_file(path) as file:
        pq.write_table(table, file)


def read_table(path: Path) -> list[dict[str, Any]]:
    """The rows of the table at ``path``, JSON columns read back into values; refused as bad
    input when it is no regular file, no Parquet file, or has no ``scenario`` or ``policy``
    column."""
    pa = _arrow(f"{path}", reading=True)
    import pyarrow.parquet as pq  # noqa: PLC0415 (the extra, checked above)

    data = read_regular(path, "Parquet table")
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, ValueError, OSError) as error:
        reason = str(error).partition("\n")[0]
        raise BadInput(f"{path}: not a Parquet table: {reason}") from None
    names = table.schema.names
    for name in ("scenario", "policy"):
        if name not in names:
            raise BadInput(f"{path}: not a memtape bench table: it has no {name!r} column")
    encoded = {f.name for f in table.schema if (f.metadata or {}).get(ENCODING) == b"json"}
    rows: list[dict[str, Any]] = table.to_pylist()
    for number, row in enumerate(rows, start=1):
        for name in encoded:
            if row[name] is not None:
                row[name] = _decoded(path, number, name, row[name])
    return rows


def _kind(pa: Any, values: Sequence[Any]) -> tuple[Any, bool]:
    """The Arrow type of a column holding ``values``, and whether they go in as JSON text."""
    given = [value for value in values if value is not None]
    if not given:
        return pa.float64(), False
    if all(isinstance(v, bool) for v in given):
        return pa.bool_(), False
    if all(isinstance(v, str) for v in given):
        return pa.string(), False
    numbers = [v for v in given if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) == len(given):
        whole = all(isinstance(v, int) and v in _INT64 for v in numbers)
        return (pa.int64() if whole else pa.float64()), False
    return pa.string(), True


def _decoded(path: Path, row: int, name: str, text: Any) -> Any:
    """A JSON column's value, refused when it is not JSON text."""
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        raise BadInput(f"{path}: row {row}, column {name}: not JSON text") from None


def _arrow(option: str, *, reading: bool = False) -> Any:
    """pyarrow, or a refusal naming ``option`` and the extra that installs it; to read a
    table, one whose Parquet reader builds no type the file names by pickle."""
    try:
        import pyarrow  # noqa: PLC0415 (an extra: only for a table)
    except ImportError:
        from memtape.core.extras import install_hint  # noqa: PLC0415 (a refusal only)

        raise BadInput(
            f"{option}: a Parquet table needs pyarrow, which is not installed: "
            f"{install_hint(EXTRA)}"
        ) from None
    version = str(pyarrow.__version__)
    if reading and _release(version) < SAFE_READER:
        raise BadInput(
            f"{option}: pyarrow {version} may run code a Parquet file holds (CVE-2023-47248): "
            "install pyarrow 14.0.1 or later"
        )
    return pyarrow


SAFE_READER = (14, 0, 1)
"""The first pyarrow whose Parquet reader does not unpickle the extension types a file
names (CVE-2023-47248): a baseline is a received file, read as data."""


def _release(version: str) -> tuple[int, int, int]:
    """The first three numbers of a version (``15.0.0.dev12`` gives 15, 0, 0); zeros when it
    does not start with them."""
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", version, re.ASCII)
    if found is None:
        return (0, 0, 0)
    major, minor, micro = (int(number) for number in found.groups())
    return (major, minor, micro)


def parameters(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's parameters by name (its axis left out), those with a value."""
    found = {}
    for name, value in row.items():
        if name.startswith(PARAM) and value is not None:
            found[name.removeprefix(PARAM).partition(".")[2]] = value
    return found


def metrics(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's metrics by name."""
    return {n.removeprefix(METRIC): v for n, v in row.items() if n.startswith(METRIC)}
