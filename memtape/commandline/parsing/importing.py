"""``import``: an agent's transcript, or a data set's item, turned into a scenario file."""

import argparse
from pathlib import Path

from memtape.commandline.parsing.arguments import Command, add_quiet, handler
from memtape.commandline.parsing.lab import add_header_options
from memtape.lab.choices import DATA_SETS, FORMATS, OBSERVATIONS, PINS


def transcript(chat: argparse.ArgumentParser) -> None:
    """``import``'s parser."""
    chat.description = (
        "One turn per message of an agent's transcript, with its tool calls and results "
        "(calls and answers) kept whole; the format is told from the content unless "
        "--format says it. A Claude Code session's or Codex rollout's own compactions "
        "become the recorded policy's. Nothing is dropped silently: a part that cannot "
        "import is refused, named, and nothing is written; what is not conversation is "
        "left out and counted by kind in the import's ledger."
    )
    chat.add_argument(
        "chat",
        type=Path,
        metavar="FILE",
        help=(
            "a transcript: JSONL, a JSON array, a request or response object, or a document "
            "wrapping its messages (an agent's trajectory)"
        ),
    )
    chat.add_argument(
        "--format",
        default="auto",
        choices=FORMATS + DATA_SETS,
        help=(
            "the transcript's format (default: auto, told from the content); longmemeval and "
            "locomo read one item of those data sets' JSON files, with its questions"
        ),
    )
    chat.add_argument(
        "--question",
        metavar="ID",
        help="--format longmemeval: the question_id of the question to import",
    )
    chat.add_argument(
        "--sample",
        metavar="ID|N",
        help="--format locomo: the sample_id (or place, from 1) of the conversation to import",
    )
    chat.add_argument(
        "--salient",
        metavar="RULE",
        help=(
            "which turns are salient: tool (default), all, none, or roles the file has "
            "(tool,system: the system prompt is chatter, dropped first, unless named)"
        ),
    )
    chat.add_argument(
        "--pin",
        default="none",
        choices=PINS,
        help="pin the system turns, or the first turn: no policy moves them (default: none)",
    )
    chat.add_argument(
        "--tokenizer",
        default=None,
        metavar="NAME",
        help="the tokenizer the compaction policy measures with (default: o200k_base with "
        "the bpe extra, else words); recorded measures each turn by the provider's recorded "
        "counts (usage), the default tokenizer the rest",
    )
    chat.add_argument(
        "--sidechains",
        action="store_true",
        help="a Claude Code session's sidechains (subagents) too, in file order",
    )
    chat.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help=(
            "skip a malformed line of a JSONL transcript, named in the ledger, rather than "
            "refuse the file (a half-written last line is always skipped, with a warning)"
        ),
    )
    chat.add_argument(
        "--path",
        metavar="KEY",
        help=(
            "where a JSON document keeps its messages: a key, or keys joined by dots "
            "(traj, run.history); default: told from the content (messages, input, output, "
            "then history, traj)"
        ),
    )
    chat.add_argument(
        "--observations",
        default="auto",
        choices=OBSERVATIONS,
        help=(
            "how a user message after an action reads: user-after-action makes it a tool "
            "result answering the action (salient, kept with it); as-written keeps it a user "
            "turn; auto (default) pairs them in text-mode SWE-agent and mini-swe-agent "
            "trajectories"
        ),
    )
    chat.add_argument(
        "--thread",
        metavar="N|KEY",
        help=(
            "a capture's thread to import: its number in the list import prints, or its key "
            "(default: the one with the most turns)"
        ),
    )
    chat.add_argument(
        "--probes",
        metavar="auto|FILE",
        help=(
            "plant probes: auto (amounts, quantities, identifiers, paths, e-mail addresses "
            "and URLs said in user and tool turns, each due from the next turn), or a "
            ".toml ([[probe]] text, from) or .jsonl ({text, from} a line) file (default: none)"
        ),
    )
    add_header_options(chat, measured=True)
    add_quiet(chat)
    chat.set_defaults(handler=handler("transcript"))


COMMANDS = {
    "import": Command(
        "turn an agent's transcript (OpenAI Chat or Responses, Anthropic Messages, a Claude "
        "Code session, LangChain messages, a Codex CLI rollout, a Gemini CLI chat, a "
        "SWE-agent or mini-swe-agent trajectory, a memtape record capture) into a scenario "
        "file",
        transcript,
    ),
}
"""This family's commands, in the order ``memtape --help`` lists them."""
