"""The rules the suite keeps so that no test depends on the machine's speed, read from the
tests' source with ``ast``.

- No ``assert`` reads a clock: not ``time.time()``, ``time.monotonic()``,
  ``time.perf_counter()``, ``time.process_time()`` (nor their ``_ns`` twins),
  ``datetime.now()``..., nor a name bound to one of them, nor a variable of the
  same function assigned from one (``began = time.monotonic()``).
- No ``assert`` puts an upper bound on a figure named as a duration
  (``result["seconds"] < 1.0``, ``elapsed <= limit``): a measured time a child
  process reported is read from the clock all the same.
- Every hypothesis ``settings(...)`` and ``settings.register_profile(...)`` says
  ``deadline=None``: hypothesis' default deadline (200 ms an example) fails a
  property on a busy machine.

A wait bounded by a clock (poll until ready, for up to a generous time) is a
watchdog, not an assertion: it is written as a loop's condition or an ``if``
that calls ``pytest.fail``, and these rules leave it alone.
"""

import ast
import re
from collections.abc import Iterator

import attrs

CLOCK_FUNCTIONS = frozenset(
    {
        "time",
        "time_ns",
        "monotonic",
        "monotonic_ns",
        "perf_counter",
        "perf_counter_ns",
        "process_time",
        "process_time_ns",
        "thread_time",
        "thread_time_ns",
    }
)
"""The ``time`` module's clocks."""

NOW_METHODS = frozenset({"now", "utcnow", "today"})
"""The methods that read the clock on ``datetime`` and ``date`` (or any class: a clock)."""

DURATION = re.compile(r"seconds|elapsed|duration|took|_ms$|_us$|_ns$", re.IGNORECASE)
"""What a figure measuring a time is called."""


@attrs.frozen
class Breach:
    """One rule broken: where (the file, the line, the function or ``""`` for the module's
    own statements), and which rule."""

    path: str
    line: int
    rule: str
    scope: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}"


TIMED = "an assert reads a clock (a test must not depend on the machine's speed)"
BOUNDED = "an assert bounds a duration from above (a test must not depend on the machine's speed)"
DEADLINE = "hypothesis settings without deadline=None"


def breaches(source: str, path: str) -> list[Breach]:
    """Every rule ``source`` (a test module's text, from ``path``) breaks, in line order."""
    tree = ast.parse(source, path)
    aliases = _clock_aliases(tree)
    found = [
        Breach(path, node.lineno, rule, name)
        for name, body in _scopes(tree)
        for node, rule in _timed_asserts(body, aliases)
    ]
    found += deadlines(source, path)
    return sorted(set(found), key=lambda breach: (breach.line, breach.rule))


def deadlines(source: str, path: str) -> list[Breach]:
    """The hypothesis settings in ``source`` (any module's text) that keep a deadline."""
    tree = ast.parse(source, path)
    return [Breach(path, node.lineno, DEADLINE) for node in _settings_without_deadline(tree)]


def _scopes(tree: ast.Module) -> Iterator[tuple[str, list[ast.stmt]]]:
    """The module's own statements, then each function's body (its nested ones apart), each
    with the function's name."""
    yield "", tree.body
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node.body


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body`` that is not inside a nested function or class."""
    nested = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    stack: list[ast.AST] = [node for node in body if not isinstance(node, nested)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, nested))


def _is_clock(node: ast.expr, aliases: frozenset[str]) -> bool:
    """Whether ``node`` names a clock: ``time.monotonic``, ``perf_counter`` imported by
    name, ``datetime.now``, or a module-level alias of one."""
    if isinstance(node, ast.Name):
        return node.id in CLOCK_FUNCTIONS or node.id in aliases
    if isinstance(node, ast.Attribute):
        if node.attr in NOW_METHODS:
            return True
        module = _dotted(node.value).rpartition(".")[2]
        return node.attr in CLOCK_FUNCTIONS and module in {"time", "_time"}
    return False


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for a chain of names and attributes; ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _clock_aliases(tree: ast.Module) -> frozenset[str]:
    """Module-level names bound to a clock itself (``_REAL_TIME = time.time``)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_clock(node.value, frozenset()):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _reads_clock(node: ast.AST, aliases: frozenset[str], tainted: set[str]) -> bool:
    """Whether evaluating ``node`` calls a clock or reads a variable assigned from one."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and _is_clock(inner.func, aliases):
            return True
        if isinstance(inner, ast.Name) and inner.id in tainted:
            return True
    return False


def _tainted(body: list[ast.stmt], aliases: frozenset[str]) -> set[str]:
    """The variables of a scope assigned, directly or through others, from a clock."""
    assignments: list[tuple[list[str], ast.expr]] = []
    for node in _own_nodes(body):
        if isinstance(node, ast.Assign):
            targets = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            assignments.append((targets, node.value))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                assignments.append(([node.target.id], node.value))
        elif isinstance(node, ast.NamedExpr):
            assignments.append(([node.target.id], node.value))
    tainted: set[str] = set()
    while True:
        more = {
            name
            for targets, value in assignments
            if _reads_clock(value, aliases, tainted)
            for name in targets
        }
        if more <= tainted:
            return tainted
        tainted |= more


def _timed_asserts(
    body: list[ast.stmt], aliases: frozenset[str]
) -> Iterator[tuple[ast.Assert, str]]:
    """Each ``assert`` of a scope that reads a clock or bounds a duration."""
    tainted = _tainted(body, aliases)
    for node in _own_nodes(body):
        if not isinstance(node, ast.Assert):
            continue
        if _reads_clock(node.test, aliases, tainted):
            yield node, TIMED
        elif any(_bounds_duration(c) for c in ast.walk(node.test) if isinstance(c, ast.Compare)):
            yield node, BOUNDED


def _bounds_duration(compare: ast.Compare) -> bool:
    """Whether ``compare`` holds a figure named as a duration below something."""
    sides = [compare.left, *compare.comparators]
    for position, operator in enumerate(compare.ops):
        if isinstance(operator, ast.Lt | ast.LtE):
            smaller = sides[position]
        elif isinstance(operator, ast.Gt | ast.GtE):
            smaller = sides[position + 1]
        else:
            continue
        if _named_as_duration(smaller):
            return True
    return False


def _named_as_duration(node: ast.expr) -> bool:
    """Whether ``node`` reads a figure whose name says it is a time taken."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and DURATION.search(inner.id):
            return True
        if isinstance(inner, ast.Attribute) and DURATION.search(inner.attr):
            return True
        if (
            isinstance(inner, ast.Subscript)
            and isinstance(inner.slice, ast.Constant)
            and isinstance(inner.slice.value, str)
            and DURATION.search(inner.slice.value)
        ):
            return True
    return False


def _settings_without_deadline(tree: ast.Module) -> Iterator[ast.Call]:
    """Each ``settings(...)`` or ``settings.register_profile(...)`` call that does not
    say ``deadline=None``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_settings(node.func):
            continue
        deadline = next((k.value for k in node.keywords if k.arg == "deadline"), None)
        if not (isinstance(deadline, ast.Constant) and deadline.value is None):
            yield node


def _is_settings(func: ast.expr) -> bool:
    """Whether ``func`` is hypothesis' ``settings`` or its ``register_profile``."""
    name = _dotted(func)
    return name in {"settings", "hypothesis.settings"} or name.endswith("settings.register_profile")
