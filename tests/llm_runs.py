"""Scenarios whose rolling summary asks a model, for the tests of a model in the loop.

``DESK`` is a short refund conversation with a tool call and its result;
``scenario`` writes it as a TOML file whose ``[llm]`` table points at a
test server, with any extra settings.
"""

from pathlib import Path

MODEL = "test-model"

DESK_STEPS = """
[[step]]
turn = "system"
text = "You are the refund desk."

[[step]]
turn = "user"
text = "My order A-1001 was charged $180.00 twice."

[[step]]
turn = "assistant"
text = "Let me look that up."
calls = ["lookup_1"]

[[step]]
turn = "tool"
text = "order A-1001: two charges of $180.00 on 2024-05-02"
answers = ["lookup_1"]
salient = true

[[step]]
turn = "assistant"
text = "I see the duplicate charge and am refunding $180.00 now."

[[step]]
turn = "user"
text = "Thanks. How long will it take?"

[[step]]
turn = "assistant"
text = "Three to five business days, reference R-77."

[[step]]
turn = "user"
text = "Great, that is all."
"""
"""Eight turns: over a budget of 30 words they compact three times."""


def scenario(
    path: Path,
    url: str,
    *,
    llm: str = "max_retries = 0\ntimeout = 5",
    compaction: str = 'summarizer = "llm"',
    steps: str = DESK_STEPS,
) -> Path:
    """Write the desk scenario to ``path``, its model at ``url``; ``llm`` and ``compaction``
    are extra lines of those tables."""
    path.write_text(
        f"""[scenario]
name = "llm-desk"

[llm]
model = "{MODEL}"
base_url = "{url}"
{llm}

[compaction]
policy = "rolling-summary"
budget = 30
keep = 2
summary_tokens = 8
{compaction}
{steps}""",
        "utf-8",
    )
    return path


LOOKUPS_STEPS = (
    DESK_STEPS
    + """
[[step]]
turn = "user"
text = "One more: order B-2002 never arrived."

[[step]]
turn = "assistant"
text = "Checking the carrier."
calls = ["track_2"]

[[step]]
turn = "tool"
text = "order B-2002: lost in transit since 2024-05-09, claim C-55 open"
answers = ["track_2"]

[[step]]
turn = "assistant"
text = "It was lost; I am sending a replacement under claim C-55."

[[step]]
turn = "user"
text = "Perfect, thank you."
"""
)
"""The desk, then a second order tracked: two calls with their results go WARM, and the
first goes COLD."""


def tiered(
    path: Path,
    url: str,
    *,
    llm: str = "max_retries = 0\ntimeout = 5",
    compaction: str = 'warm = "llm"\ngist = "llm"',
    steps: str = LOOKUPS_STEPS,
) -> Path:
    """Write a scenario of ``steps`` (default: ``LOOKUPS_STEPS``) under tiered compaction
    (budget 30, hot_n 2) to ``path``, its model at ``url``; ``llm`` and ``compaction`` are
    extra lines of those tables (default: a model writes the WARM items and the gist)."""
    path.write_text(
        f"""[scenario]
name = "llm-lookups"

[llm]
model = "{MODEL}"
base_url = "{url}"
{llm}

[compaction]
policy = "tiered"
budget = 30
hot_n = 2
{compaction}
{steps}""",
        "utf-8",
    )
    return path
