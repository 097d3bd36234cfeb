"""The pytest plugin: ``--memtape-policy`` runs the kit with no test file, and costs nothing
without it."""

import subprocess
import sys
from pathlib import Path

import pytest

from memtape.core.extras import install_hint

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def runner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytest run in an empty directory, with the kit's CI profile, that can import the
    project's tests (a subprocess: the kit's hypothesis must be the one loaded once)."""
    pytester.makeini("[pytest]\n")
    monkeypatch.setenv("MEMTAPE_KIT_PROFILE", "memtape-ci")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    return pytester


class TestPlugin:
    @pytest.mark.slow  # the kit's 50 examples in a child pytest
    def test_a_shipped_policy_passes_with_no_test_file(self, runner: pytest.Pytester) -> None:
        """``--memtape-policy tiered`` adds one item, which passes."""
        result = runner.runpytest_subprocess("--memtape-policy", "tiered", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)

    def test_a_broken_policy_fails_with_the_counterexample_path(
        self, runner: pytest.Pytester, tmp_path: Path
    ) -> None:
        """The failure names the invariant and the scenario file, which exists."""
        folder = tmp_path / "found"
        result = runner.runpytest_subprocess(
            "--memtape-policy",
            "tests.broken_policies:NeverCompacts",
            "--memtape-counterexamples",
            str(folder),
            "-p",
            "no:cacheprovider",
        )
        result.assert_outcomes(failed=1)
        saved = folder / "tests.broken_policies-NeverCompacts.toml"
        result.stdout.fnmatch_lines(
            [
                "*tests.broken_policies:NeverCompacts breaks budget: event *",
                f"*replay it: memtape run {saved} --out run.jsonl",
            ]
        )
        assert saved.is_file()

    @pytest.mark.slow  # the kit's 50 examples in a child pytest
    def test_a_salience_that_never_varies_fails_with_what_was_seen(
        self, runner: pytest.Pytester
    ) -> None:
        """Once the run is over, the item fails with the kit's one message, no traceback."""
        policy = "tests.broken_policies:ToolsAsChatter"
        result = runner.runpytest_subprocess("--memtape-policy", policy, "-p", "no:cacheprovider")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([f"{policy} marked none of the * drawn turns left to it *"])
        assert "Traceback" not in result.stdout.str()

    @pytest.mark.slow  # the kit's 50 examples in a child pytest
    def test_with_the_option_a_projects_own_tests_are_not_collected(
        self, runner: pytest.Pytester
    ) -> None:
        """Started at a project's root (its testpaths, a test file beside them), the
        session runs the kit's item alone."""
        runner.makeini("[pytest]\ntestpaths = suite\n")
        runner.mkdir("suite")
        (runner.path / "suite" / "test_slow.py").write_text("def test_slow():\n    assert False\n")
        runner.makepyfile(test_here="def test_here():\n    assert False\n")

        result = runner.runpytest_subprocess("--memtape-policy", "tiered", "-p", "no:cacheprovider")

        result.assert_outcomes(passed=1)
        assert "test_slow" not in result.stdout.str()

    def test_without_the_option_the_projects_tests_run(self, runner: pytest.Pytester) -> None:
        runner.makepyfile(test_here="def test_here():\n    assert True\n")

        runner.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)

    def test_without_the_option_it_adds_nothing(self, runner: pytest.Pytester) -> None:
        """An empty directory collects no test at all."""
        result = runner.runpytest_subprocess("-p", "no:cacheprovider")
        assert pytest.ExitCode.NO_TESTS_COLLECTED == result.ret

    def test_loading_it_imports_neither_hypothesis_nor_the_kit(self) -> None:
        """The plugin module alone pulls in neither hypothesis nor the kit's machine."""
        code = (
            "import sys; import memtape.testing.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith(('hypothesis', 'memtape.test'))))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert "['memtape.testing', 'memtape.testing.plugin']" == out.strip()


class TestWithoutHypothesis:
    @pytest.mark.parametrize(
        "statement",
        ["from memtape.testing import PolicyMachine", "import memtape.testing.strategies"],
    )
    def test_the_kit_says_which_extra_to_install(self, statement: str) -> None:
        """With hypothesis unimportable, the kit fails with one line naming the extra."""
        code = f"import sys; sys.modules['hypothesis'] = None; {statement}"
        result = subprocess.run(
            [sys.executable, "-c", code], check=False, capture_output=True, text=True
        )
        last = result.stderr.strip().splitlines()[-1]
        expected = (
            "ImportError: memtape.testing needs hypothesis, which is not installed: "
            f"{install_hint('testing')}"
        )
        assert (1, expected) == (result.returncode, last)
