"""Shared fixtures: one headless Chromium for the whole session's browser tests.

Without a Chromium (or Playwright) the browser tests are skipped and the run
ends with one line saying so; with ``MEMTAPE_REQUIRE_BROWSER=1`` (set by
``.ci/run``) they fail instead, so CI cannot pass without running them.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from memtape.llm.cache import close_caches
from memtape.llm.cache_location import CACHE_ENV
from tests import suite_profile
from tests.llm_server import ChatServer, serving

CHROMIUM = Path(os.environ.get("MEMTAPE_CHROMIUM", "/usr/bin/chromium"))
"""Debian's Chromium (Playwright's own browser download does not work here)."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Flags for a headless Chromium as root in a container with a closed network."""

SCREENSHOTS = Path(__file__).resolve().parent.parent / ".artifacts" / "screenshots"
"""Where browser tests leave a screenshot of each main state (git-ignored)."""

_skipped: list[str] = []

SLOW_OPTION = "--memtape-slow"
"""The slow job (`make test-slow`): full hypothesis profiles and the tests marked ``slow``."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--memtape-slow``: the slow job."""
    parser.addoption(
        SLOW_OPTION,
        action="store_true",
        default=False,
        help="run the slow job: every hypothesis example and the tests marked slow",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Choose the profile before any test module is imported (their settings read it)."""
    suite_profile.FULL = bool(config.getoption("memtape_slow"))
    # Hypothesis's 100 examples (a share of them in `make test`) for the properties that name
    # no count; `--hypothesis-profile` still wins. The kit's own profiles (memtape,
    # memtape-ci, memtape-thorough) are its users' and are not touched. No deadline and no
    # too-slow health check: both time the machine, which CI shares with other work.
    if config.getoption("hypothesis_profile", None) is None:
        name = "memtape-suite-full" if suite_profile.FULL else "memtape-suite"
        settings.register_profile(
            name,
            max_examples=suite_profile.examples(100),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        settings.load_profile(name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``--memtape-slow``, the tests marked ``slow`` are deselected (not skipped):
    they run in the slow job."""
    if config.getoption("memtape_slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def _unavailable() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401, PLC0415
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[browser]')"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium, launched once for every browser test."""
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("MEMTAPE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required (MEMTAPE_REQUIRE_BROWSER=1): {reason}")
        _skipped.append(reason)
        pytest.skip(f"browser tests skipped: {reason}")
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; a script error in it fails the test.

    The page's Content-Security-Policy is bypassed: the tests evaluate
    scripts in it, and the escaping of user data must hold without the CSP's help.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert [] == errors


@pytest.fixture
def screenshot(page: Any) -> Any:
    """Save the page as ``.artifacts/screenshots/NAME.png``."""

    def take(name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line when the browser tests were skipped, and why."""
    if _skipped:
        terminalreporter.write_line(f"browser tests SKIPPED: {_skipped[0]}", yellow=True)


@pytest.fixture(autouse=True)
def _no_signing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs are written and checked unsigned, and no signature is required, unless a test
    sets the key or the requirement itself."""
    monkeypatch.delenv("MEMTAPE_SIGNING_KEY", raising=False)
    monkeypatch.delenv("MEMTAPE_REQUIRE_SIGNED", raising=False)


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands print their lines whole, as to a pipe, unless a test sets COLUMNS itself,
    in this process and in the ones a test starts."""
    monkeypatch.delenv("COLUMNS", raising=False)
    # readline (pytest imports it) exports the terminal's COLUMNS to the process's own
    # environment, which a child inherits though os.environ does not hold it.
    os.unsetenv("COLUMNS")


SECRET_KEY = "sk-test-5ecret-never-written"
"""The API key the model tests set: it must reach the server and nothing else."""


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A Chat Completions server on 127.0.0.1 (``tests.llm_server``), stopped after the test."""
    yield from serving()


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A test's own model environment: the key set, no base URL from outside, the cache in
    ``tmp_path/cache.sqlite``, and ``tmp_path`` the working directory. Yields the cache path."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cache = tmp_path / "cache.sqlite"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    monkeypatch.chdir(tmp_path)
    yield cache
    close_caches()
