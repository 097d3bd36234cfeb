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
from memtape.scenarios.loader import load_scenario


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
            '      parameters: budget (required), hot_n = 2, tokenizer = "words", recall (unset)',
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
            "  recall (unset by default): what searches the turns that left the window for a "
            'recall step: "bm25", or "embeddings" (the [llm] model, by cosine; unset: no recall)',
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
            "memtape: error: no policy or mechanism 'clear-tool-result' (see memtape policies "
            "for the list): did you mean 'clear-tool-results'?"
        ] == err.splitlines()

    def test_far_from_any_name_has_no_guess(self) -> None:
        with pytest.raises(BadInput, match=r"no policy or mechanism 'zzz' \(see memtape policies "):
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


class TestMechanisms:
    @pytest.mark.parametrize(
        ("name", "found"),
        [
            ("blocks", "blocks"),
            ("block-limit", "blocks"),
            ("ttl", "expiry"),
            ("expires", "expiry"),
            ("as_of", "bi-temporal"),
            ("valid-as-of", "bi-temporal"),
            ("recall", "recall"),
            ("recall-budget", "recall"),
            ("judged", "supersession"),
        ],
    )
    def test_a_mechanism_is_found_by_its_name_a_setting_or_its_promise(
        self, capsys: pytest.CaptureFixture[str], name: str, found: str
    ) -> None:
        status, out, err = _memtape(capsys, "policies", name)

        assert (0, "", f"{found} (a mechanism beside the policies)") == (
            status,
            err,
            out.splitlines()[0],
        )

    def test_blocks_in_full_say_where_they_are_written_and_their_promise(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "blocks")

        lines = out.splitlines()
        assert (
            "  limit in [[block]] (required): the most characters it holds: an edit past it "
            "is refused",
            "promises: block-limit",
            "guide: docs/how-to/memory-blocks.md",
        ) == (
            next(line for line in lines if line.startswith("  limit ")),
            next(line for line in lines if line.startswith("promises:")),
            lines[-1],
        )

    def test_the_list_ends_with_every_mechanism_and_its_promises(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies")

        lines = out.splitlines()
        at = lines.index("mechanisms beside the policies:")
        listed = [line.split(":")[0].strip() for line in lines[at + 1 :: 3] if line]
        assert ["blocks", "recall", "expiry", "bi-temporal", "supersession"] == listed[:5]
        assert "      promises: expires" in lines[at:]

    def test_a_mechanism_as_json_names_its_settings_and_where_each_is_written(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "ttl", "--json")

        described = json.loads(out)
        assert ("expiry", "mechanism", ["expires"]) == (
            described["name"],
            described["kind"],
            described["promises"],
        )
        assert [("ttl", "[forgetting]"), ("expires_at", "a write step")] == [
            (setting["name"], setting["table"]) for setting in described["settings"]
        ]

    def test_a_mistyped_mechanism_gets_the_closest_name(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, err = _memtape(capsys, "policies", "blokcs")

        assert (2, "") == (status, out)
        assert [
            "memtape: error: no policy or mechanism 'blokcs' (see memtape policies for the "
            "list): did you mean 'blocks'?"
        ] == err.splitlines()

    def test_a_mechanisms_module_says_what_it_is(self) -> None:
        summaries = {mechanism.name: mechanism.summary for mechanism in catalogue.mechanisms()}

        assert summaries["expiry"].startswith("Expiry: ")


class TestSharedParametersUnset:
    def test_every_compaction_policy_lists_recall_unset(self) -> None:
        recalls = [
            [
                (p.default, p.required)
                for p in catalogue.describe("compaction", n).parameters
                if p.name == "recall"
            ]
            for n in AXES["compaction"]
        ]

        assert [[(None, False)]] * len(AXES["compaction"]) == recalls

    def test_every_forgetting_policy_lists_ttl_unset(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies", "lru")

        assert (
            "  ttl (unset by default): clock units after which a fact written from then on" in out
        )

    def test_the_list_shows_an_unset_parameter_as_unset(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _memtape(capsys, "policies")

        assert '      parameters: capacity (required), supersession = "key", ttl (unset)' in (
            out.splitlines()
        )

    @pytest.mark.parametrize(
        ("scenario", "setting", "table", "expected"),
        [
            ("refund-desk", "compaction.recall=bm25", "compaction", ("recall", "bm25")),
            ("dana-facts", "forgetting.ttl=600", "forgetting", ("ttl", 600.0)),
            (
                "dana-facts",
                "forgetting.supersession=add-only",
                "forgetting",
                ("supersession", "add-only"),
            ),
        ],
    )
    def test_set_reaches_a_mechanisms_parameter(
        self, scenario: str, setting: str, table: str, expected: tuple[str, Any]
    ) -> None:
        policies = load_scenario(scenario).policies.with_settings([setting])

        assert expected[1] == policies.params()[table][expected[0]]
