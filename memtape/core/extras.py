"""How to install one of memtape's optional extras, said the way memtape itself was installed.

From a package index, ``pip install 'memtape[llm]'``. From a clone (an editable
install, as ``make`` makes), that line would fetch the released memtape beside the
clone, or fail: there it is ``pip install -e '.[llm]'`` (or the clone's path, from
elsewhere). pip records which in the distribution's ``direct_url.json``
(PEP 610: ``dir_info.editable``).
"""

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from memtape.core.paths import same_file


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` into this memtape: ``pip install
    'memtape[EXTRA]'``, or ``pip install -e '.[EXTRA]'`` for a clone installed editable
    (its path instead of ``.`` when the current directory is elsewhere)."""
    clone = _editable_clone()
    if clone is None:
        return f"pip install 'memtape[{extra}]'"
    where = "." if same_file(clone, Path.cwd()) else str(clone)
    return f"pip install -e '{where}[{extra}]'"


def _editable_clone() -> Path | None:
    """The directory memtape is installed from in editable mode, or None (installed from an
    index or a wheel, or not installed at all)."""
    try:
        text = metadata.distribution("memtape").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        origin = json.loads(text)
    except ValueError:
        return None
    if not isinstance(origin, dict):
        return None
    info, url = origin.get("dir_info"), origin.get("url")
    if not (isinstance(info, dict) and info.get("editable") is True and isinstance(url, str)):
        return None
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None
