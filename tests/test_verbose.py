"""memtape.commandline.verbose: ``-v`` shows decisions on stderr while ``main`` runs, and
leaves logging as it found it when ``main`` returns."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io
import logging
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout

import pytest
import structlog

from memtape.cli import main
from memtape.core.logs import LOGGER_NAME
from memtape.policies.session import Session
from memtape.scenarios import load_scenario


def _verbose_show(err: io.StringIO) -> int:
    """``memtape -v show refund-desk`` with its output captured, stderr into ``err``."""
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        return main(["-v", "show", "refund-desk"])


def _decide_refund_desk() -> None:
    """Decide refund-desk in this process, outside ``main``: it logs if anything listens."""
    scenario = load_scenario("refund-desk")
    Session(scenario.policies).execute_all(scenario.steps)


@pytest.fixture(autouse=True)
def _put_back() -> Iterator[None]:
    """Whatever a failing test leaves attached is taken off, so it fails alone."""
    logger = logging.getLogger(LOGGER_NAME)
    handlers, level, config = list(logger.handlers), logger.level, structlog.get_config()
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)
    structlog.configure(**config)


class TestWhileMainRuns:
    def test_each_decision_is_a_line_on_the_stderr_of_that_call(self) -> None:
        first, second = io.StringIO(), io.StringIO()

        assert (0, 0) == (_verbose_show(first), _verbose_show(second))
        assert first.getvalue() == second.getvalue()
        assert first.getvalue().startswith("event='TurnAdded' at=1 step=1 ")


class TestAfterMainReturns:
    def test_two_verbose_calls_under_closed_captures_leave_no_logging_error(self) -> None:
        """As pytest closes each test's captured stderr: nothing writes to it afterwards."""
        for _ in range(2):
            captured = io.StringIO()
            assert 0 == _verbose_show(captured)
            captured.close()
        later = io.StringIO()
        with redirect_stderr(later):
            _decide_refund_desk()

        assert "" == later.getvalue()

    def test_the_logger_and_structlog_are_as_they_were(self) -> None:
        logger = logging.getLogger(LOGGER_NAME)
        before = (list(logger.handlers), logger.level, structlog.get_config())
        _verbose_show(io.StringIO())

        assert before == (list(logger.handlers), logger.level, structlog.get_config())
