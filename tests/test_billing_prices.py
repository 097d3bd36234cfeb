"""The price table: the shipped rows, a price file over them, and bad files refused."""

import datetime
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.projections.billing.prices import Price, parse_prices, read_prices, shipped_prices

ROW = """
[models."my-model"]
provider = "openai"
input = 1.0
output = 2.0
cache_read = 0.1
cache_write = 1.0
"""


class TestShipped:
    def test_every_row_names_the_page_it_was_read_from(self) -> None:
        assert [] == [p.model for p in shipped_prices().models.values() if not p.source]

    def test_a_dated_snapshot_is_priced_as_its_model(self) -> None:
        table = shipped_prices()
        expected = table.price("claude-sonnet-4-5", "here")
        assert expected == table.price("claude-sonnet-4-5-20250929", "here")

    def test_every_row_names_the_day_it_was_read(self) -> None:
        text = resources.files("memtape.projections.billing").joinpath("prices.toml").read_text()
        rows = tomllib.loads(text)["models"]
        days = {name: row.get("read_on") for name, row in rows.items()}
        undated = [name for name, day in days.items() if not isinstance(day, str)]
        assert ([], len(rows)) == (undated, len(shipped_prices().models))
        assert all(datetime.date.fromisoformat(day) for day in days.values())

    def test_claude_opus_caches_from_4096_tokens(self) -> None:
        assert 4096 == shipped_prices().price("claude-opus-4-5", "here").cache_minimum

    def test_gemini_2_5_caches_from_2048_tokens(self) -> None:
        """Google's caching page (updated 2026-10) gives 2,048 for both 2.5 models; the
        table said 1,024 for Flash, as the page did when implicit caching began."""
        table = shipped_prices()
        assert [2048, 2048] == [
            table.price(model, "here").cache_minimum
            for model in ("gemini-2.5-flash", "gemini-2.5-pro")
        ]

    def test_a_google_row_that_names_no_minimum_caches_from_2048(self) -> None:
        row = ROW.replace('"openai"', '"google"')
        assert 2048 == parse_prices(row, "p.toml").price("my-model", "here").cache_minimum


class TestUnknownModel:
    def test_is_refused_with_the_closest_name(self) -> None:
        with pytest.raises(BadInput) as error:
            shipped_prices().price("claude-sonet-4-5", "s.toml: [cost] model")
        expected = (
            "s.toml: [cost] model: no price for model 'claude-sonet-4-5' "
            "(--prices FILE.toml adds one): did you mean 'claude-sonnet-4-5'?"
        )
        assert expected == str(error.value)


class TestPriceFile:
    def test_adds_a_row_to_the_shipped_ones(self, tmp_path: Path) -> None:
        path = tmp_path / "prices.toml"
        path.write_text(ROW, encoding="utf-8")
        table = read_prices(path)
        expected = Price("my-model", "openai", 1.0, 2.0, 0.1, 1.0, cache_minimum=1024)
        assert (expected, True) == (table.price("my-model", "x"), "gpt-5" in table.models)

    def test_overrides_a_shipped_row(self, tmp_path: Path) -> None:
        path = tmp_path / "prices.toml"
        path.write_text(ROW.replace("my-model", "gpt-5"), encoding="utf-8")
        assert 2.0 == read_prices(path).price("gpt-5", "x").output

    @pytest.mark.parametrize(
        ("change", "expected"),
        [
            (
                ('"openai"', '"openia"'),
                "p.toml: models.'my-model': provider must be one of anthropic, openai, "
                "google, got 'openia': did you mean 'openai'?",
            ),
            (
                ("input = 1.0", "input = -1.0"),
                "p.toml: models.'my-model': input must be a number in [0, 1e+06], got -1.0",
            ),
            (
                # Priced at 1e308 a bill overflowed to inf, which --json wrote as Infinity
                # and the gate passed as not a number.
                ("input = 1.0", "input = 1e308"),
                "p.toml: models.'my-model': input must be a number in [0, 1e+06], got 1e+308",
            ),
            (
                ("output = 2.0", "output = 1000000.5"),
                "p.toml: models.'my-model': output must be a number in [0, 1e+06], got 1000000.5",
            ),
            (
                ("input = 1.0", "input = 1.0\ninputt = 2"),
                "p.toml: models.'my-model': unknown parameter inputt: did you mean input?",
            ),
            (
                ("output = 2.0\n", ""),
                "p.toml: models.'my-model': missing parameter output",
            ),
            (
                ("[models.", "[prices."),
                'p.toml: prices: unknown table (a price file holds [models."NAME"])',
            ),
        ],
    )
    def test_a_bad_file_is_refused_naming_the_file_and_the_key(
        self, change: tuple[str, str], expected: str
    ) -> None:
        with pytest.raises(BadInput) as error:
            parse_prices(ROW.replace(*change), "p.toml")
        assert expected == str(error.value)

    def test_a_file_that_is_not_toml_is_refused(self) -> None:
        with pytest.raises(BadInput) as error:
            parse_prices("[models", "p.toml")
        assert str(error.value).startswith("p.toml: not valid TOML: ")
