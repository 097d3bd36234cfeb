"""tests.suite_rules: no test depends on the machine's speed, and the rules catch one that
would."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest
from hypothesis import settings

from tests.suite_rules import BOUNDED, DEADLINE, TIMED, Breach, breaches, deadlines

ROOT = Path(__file__).resolve().parent.parent

ORDERED_NOT_TIMED = {
    (
        "tests/test_determinism.py",
        "test_within_a_pass_a_decision_sees_its_world_and_the_rest_the_real_clock",
    ): "the clocks are its subject: a stand-in's reading is ordered between two readings "
    "of the real clock, which holds however slow the machine is",
}
"""The asserts that read a clock without timing anything, by file and function, and why."""


def _suite() -> list[Breach]:
    """Every breach in the modules pytest collects or imports (tests/, examples/)."""
    paths = sorted([*ROOT.glob("tests/*.py"), *ROOT.glob("examples/*.py")])
    return [
        breach
        for path in paths
        for breach in breaches(path.read_text("utf-8"), str(path.relative_to(ROOT)))
    ]


def _lines(source: str) -> list[tuple[int, str]]:
    return [(breach.line, breach.rule) for breach in breaches(source, "t.py")]


class TestTheSuite:
    def test_no_assert_reads_a_clock_and_no_property_has_a_deadline(self) -> None:
        found = [b for b in _suite() if (b.path, b.scope) not in ORDERED_NOT_TIMED]

        assert [] == [str(breach) for breach in found]

    def test_each_assert_let_through_still_reads_a_clock(self) -> None:
        """An entry whose assert is gone (or renamed) leaves the list."""
        found = {(breach.path, breach.scope) for breach in _suite()}

        assert set(ORDERED_NOT_TIMED) == set(ORDERED_NOT_TIMED) & found

    def test_the_kits_profiles_say_no_deadline(self) -> None:
        """Users' CI shares its machine too: ``memtape.testing`` registers no deadline."""
        paths = sorted(ROOT.glob("memtape/**/*.py"))

        assert [] == [str(b) for p in paths for b in deadlines(p.read_text("utf-8"), str(p))]

    @pytest.mark.parametrize("name", ["memtape", "memtape-ci", "memtape-thorough"])
    def test_each_kit_profile_has_no_deadline(self, name: str) -> None:
        import memtape.testing.machine  # noqa: F401, PLC0415 (registers the profiles)

        assert None is settings.get_profile(name).deadline

    def test_the_suites_properties_run_without_a_deadline(self) -> None:
        """The profile ``conftest.py`` loads, which every property without its own uses."""
        loaded = settings.default
        assert loaded is not None
        assert None is loaded.deadline


class TestClocksInAsserts:
    def test_a_timed_assert_is_caught(self) -> None:
        source = (
            "import time\n"
            "def test_quick():\n"
            "    began = time.monotonic()\n"
            "    work()\n"
            "    assert time.monotonic() - began < 1.0\n"
        )

        assert [(5, TIMED)] == _lines(source)

    def test_a_variable_derived_from_a_clock_is_followed(self) -> None:
        source = (
            "from time import perf_counter\n"
            "def test_quick():\n"
            "    start = perf_counter()\n"
            "    work()\n"
            "    elapsed = perf_counter() - start\n"
            "    took = elapsed * 1000\n"
            "    assert took <= LIMIT\n"
        )

        assert [(7, TIMED)] == _lines(source)

    @pytest.mark.parametrize(
        "read",
        [
            "time.time()",
            "time.process_time_ns()",
            "datetime.now().timestamp()",
            "datetime.datetime.utcnow().second",
            "REAL()",
        ],
    )
    def test_every_clock_is_a_clock(self, read: str) -> None:
        source = f"import time\nREAL = time.perf_counter\ndef test_t():\n    assert {read} > 0\n"

        assert [(4, TIMED)] == _lines(source)

    def test_a_duration_a_child_measured_is_caught_when_bounded(self) -> None:
        source = 'def test_fast(result):\n    assert result["seconds"] < REFUSAL_SECONDS\n'

        assert [(2, BOUNDED)] == _lines(source)

    @pytest.mark.parametrize(
        "statement",
        [
            "assert call.seconds > 0",
            "assert 3 == count",
            "assert 0.0 == metrics['llm_seconds']",
            "assert started",
        ],
    )
    def test_an_assert_that_times_nothing_passes(self, statement: str) -> None:
        source = f"import time\ndef test_t():\n    started = time\n    {statement}\n"

        assert [] == _lines(source)

    def test_a_watchdog_is_no_assert(self) -> None:
        source = (
            "import time, pytest\n"
            "def test_ready(server):\n"
            "    deadline = time.monotonic() + 60\n"
            "    while not server.ready and time.monotonic() < deadline:\n"
            "        time.sleep(0.1)\n"
            "    if time.monotonic() > deadline:\n"
            "        pytest.fail('never ready')\n"
            "    assert server.ready\n"
        )

        assert [] == _lines(source)

    def test_a_clock_read_in_another_function_taints_nothing_here(self) -> None:
        source = (
            "import time\n"
            "def stamp():\n"
            "    now = time.time()\n"
            "    return now\n"
            "def test_t(now):\n"
            "    assert now == 3\n"
        )

        assert [] == _lines(source)


class TestHypothesisDeadlines:
    @pytest.mark.parametrize(
        "call",
        [
            "settings(max_examples=5)",
            "hypothesis.settings(max_examples=5)",
            'settings.register_profile("x", max_examples=5)',
            "settings(deadline=timedelta(seconds=5))",
            "settings(deadline=500)",
        ],
    )
    def test_settings_that_keep_a_deadline_are_caught(self, call: str) -> None:
        assert [(1, DEADLINE)] == _lines(f"PROFILE = {call}\n")

    @pytest.mark.parametrize(
        "call",
        [
            "settings(max_examples=5, deadline=None)",
            'settings.register_profile("x", deadline=None, derandomize=True)',
            'settings.get_profile("x")',
        ],
    )
    def test_settings_without_a_deadline_pass(self, call: str) -> None:
        assert [] == _lines(f"PROFILE = {call}\n")
