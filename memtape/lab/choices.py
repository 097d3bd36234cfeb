"""The lab's option values that the command line shows in its help, named where it can
read them without importing the lab: the transcript formats, what may be pinned,
``--probes auto``, and the compaction a written scenario file declares.

Each is used by the module that acts on it (``memtape.lab.importers``,
``memtape.lab.probes``, ``memtape.lab.scenario_file``).
"""

FORMATS = (
    "auto",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "claude-code",
    "langchain",
    "otel",
    "codex",
    "gemini-cli",
    "swe-agent",
    "mini-swe-agent",
    "capture",
)
"""What ``--format`` takes: ``auto`` (told from the content) or a format's name, each the
``FORMAT`` of its reader in ``memtape.lab.importers``."""

DATA_SETS = ("longmemeval", "locomo")
"""The long-memory data sets ``--format`` also takes (``memtape.lab.longmemory``): one
item of the file (``--question``, ``--sample``) becomes a scenario with questions."""

OBSERVATIONS = ("auto", "as-written", "user-after-action")
"""What ``--observations`` takes (``memtape.lab.importers.observations``): how a user
message after an agent's action reads."""

PINS = ("none", "system", "first")
"""What ``--pin`` may pin: nothing, the system turns, the first turn."""

AUTO = "auto"
"""The ``--probes`` value that plants probes by the rule rather than from a file."""

DEFAULT_BUDGET = 2000
"""The compaction budget of generated and imported files."""

DEFAULT_HOT_N = 8
"""The tiered compaction's verbatim turns in generated and imported files."""
