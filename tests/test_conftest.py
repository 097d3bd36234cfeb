"""The browser fixture: without a Chromium, a clear skip locally and a failure in CI."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_browser_test(**env: str) -> subprocess.CompletedProcess[str]:
    """One browser test in a child pytest, with no Chromium where it is looked for."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--memtape-slow",
            "-k",
            "turn_4",
            "tests/test_viewer_browser.py",
        ],
        cwd=ROOT,
        env={**os.environ, "MEMTAPE_CHROMIUM": "/nonexistent/chromium", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# Each starts a whole pytest session in a child process.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("required", ["", "0"])
def test_without_chromium_the_browser_tests_skip_with_one_line(required: str) -> None:
    result = run_browser_test(MEMTAPE_REQUIRE_BROWSER=required)
    assert 0 == result.returncode
    assert "1 skipped" in result.stdout
    line = "browser tests SKIPPED: /nonexistent/chromium not found (apt-get install -y chromium)"
    assert 1 == result.stdout.count(line)


def test_ci_fails_when_the_browser_tests_cannot_run() -> None:
    result = run_browser_test(MEMTAPE_REQUIRE_BROWSER="1")
    assert 0 != result.returncode
    assert "browser tests are required (MEMTAPE_REQUIRE_BROWSER=1)" in result.stdout
    assert "skipped" not in result.stdout
