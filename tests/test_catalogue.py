"""memtape.projections.catalogue and ``memtape policies``: the zoo described, from its classes."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import RECENT_VERBATIM
from memtape.policies.plumbing.registry import Registry
from memtape.policies.zoo import AXES
from memtape.projections import catalogue
from memtape.projections.wrapping import cells


def _memtape(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@attrs.frozen
class Replica:
    """A policy with a source, as a replica of a product's policy says it."""

    name: ClassVar[str] = "replica"
    upstream: ClassVar[str] = "Example Corp's agent, docs.example.com/compaction"
    budget: int
    keep: int = 5
    """How many of the newest turns stay verbatim."""

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "Replica":
        """A budget and ``keep``."""
        params = Params(data, where)
        replica = cls(params.integer("budget", minimum=1), params.integer("keep", 5, minimum=0))
        params.done()
        return replica

    @property
    def promises(self) -> frozenset[str]:
        """The newest turns verbatim."""
        return frozenset({RECENT_VERBATIM})

    def params(self) -> dict[str, Any]:
        """The budget and ``keep``."""
        return {"policy": self.name, "budget": self.budget, "keep": self.keep}


@pytest.fixture
def with_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    """The zoo with one more compaction policy registered, as another branch adds them."""
    homes = {name: f"{cls.__module__}:{cls.__qualname__}" for name, cls in _classes("compaction")}
    homes["replica"] = f"{__name__}:Replica"
    monkeypatch.setitem(AXES, "compaction", Registry(homes))


def _classes(axis: str) -> list[tuple[str, Any]]:
    return [(name, AXES[axis][name]) for name in AXES[axis]]


class TestTheList:
    def test_every_policy_of_every_axis_is_listed_as_json(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, err = _memtape(capsys, "policies", "--json")

        listed = [(policy["axis"], policy["name"]) for policy in json.loads(out)]
        assert (0, "") == (status, err)
        assert [(axis, name) for axis in AXES for name in AXES[axis]] == listed

    def test_a_policy_registered_in_the_zoo_is_listed_with_no_other_change(
        self, capsys: pytest.CaptureFixture[str], with_replica: None
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "--json")

        (replica,) = [policy for policy in json.loads(out) if policy["name"] == "replica"]
        assert ("compaction", 5, ["recent-verbatim"], Replica.upstream) == (
            replica["axis"],
            next(p["default"] for p in replica["parameters"] if p["name"] == "keep"),
            replica["promises"],
            replica["upstream"],
        )

    def test_the_text_gives_each_policy_its_parameters_and_promises(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies")

        lines = out.splitlines()
        at = lines.index(
            "  tiered: The seed's compaction: over `budget`, keep `hot_n` turns verbatim."
        )
        assert [
            '      parameters: budget (required), hot_n = 2, tokenizer = "words"',
            "      promises: budget, pinned, recent-verbatim, well-formed",
        ] == lines[at + 1 : at + 3]

    def test_a_narrow_terminal_gets_lines_that_fit_it(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "60")

        _, out, _ = _memtape(capsys, "policies")

        assert [] == [line for line in out.splitlines() if cells(line) > 60]
        assert "generative-agents:" in out


class TestOnePolicy:
    def test_a_policy_in_full_gives_each_parameter_its_default(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, _ = _memtape(capsys, "policies", "clear-tool-results")

        assert 0 == status
        assert [
            "clear-tool-results (compaction)",
            "Over `budget`, replace each tool result but the last `keep` with `placeholder`.",
            "",
            "parameters:",
            "  budget (required)",
            "  keep (default 3)",
            '  placeholder (default "[tool result cleared]")',
            '  tokenizer (default "words")',
            "promises: budget, pinned, recent-verbatim, well-formed",
        ] == out.splitlines()

    def test_a_parameter_says_what_it_means_and_a_replica_its_source(
        self, capsys: pytest.CaptureFixture[str], with_replica: None
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "replica")

        lines = out.splitlines()
        assert "  keep (default 5): How many of the newest turns stay verbatim." in lines
        assert f"upstream: {Replica.upstream}" == lines[-1]

    def test_a_default_that_follows_the_budget_says_so(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "rolling-summary", "--json")

        (summary,) = [p for p in json.loads(out)["parameters"] if p["name"] == "summary_tokens"]
        assert (None, False, "budget") == (
            summary["default"],
            summary["required"],
            summary["follows"],
        )

    def test_a_policy_its_shared_parameters_cannot_build_says_what_it_needs(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "llm", "--json")

        described = json.loads(out)
        assert (None, True) == (described["promises"], "needs a model" in described["needs"])
        assert ["config", "prompt"] == [p["name"] for p in described["parameters"]]

    def test_a_narrow_terminal_wraps_a_policy_in_full(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "60")

        _, out, _ = _memtape(capsys, "policies", "generative-agents")

        assert [] == [line for line in out.splitlines() if cells(line) > 60]


class TestAnUnknownName:
    def test_is_one_line_with_the_closest_name(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, err = _memtape(capsys, "policies", "clear-tool-result")

        assert (2, "") == (status, out)
        assert [
            "memtape: error: no policy 'clear-tool-result' (see memtape policies for the "
            "list): did you mean 'clear-tool-results'?"
        ] == err.splitlines()

    def test_far_from_any_name_has_no_guess(self) -> None:
        with pytest.raises(BadInput, match=r"no policy 'zzz' \(see memtape policies "):
            catalogue.find("zzz")


class TestRequired:
    def test_a_shared_parameter_without_a_default_is_required(self) -> None:
        budget = catalogue.describe("compaction", "none").parameters[0]

        assert ("budget", None, True) == (budget.name, budget.default, budget.required)

    def test_a_shared_parameter_with_a_default_is_not(self) -> None:
        tokenizer = catalogue.describe("compaction", "none").parameters[1]

        assert ("tokenizer", "words", False) == (
            tokenizer.name,
            tokenizer.default,
            tokenizer.required,
        )
