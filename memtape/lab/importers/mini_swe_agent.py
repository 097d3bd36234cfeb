"""mini-swe-agent trajectories (``*.traj.json``) as turns.

A trajectory is one JSON document ``{"info", "messages", "trajectory_format":
"mini-swe-agent-1"}`` (``mini-swe-agent-1.1`` from version 2). Its messages
are Chat Completions messages, read as ``openai-chat`` reads them, with
mini-swe-agent's own metadata beside them (``extra``: the actions parsed,
the raw response, costs) which does not import:

- ``system`` and ``user`` messages as they are, ``assistant`` messages with
  their ``tool_calls`` (version 2's tool-calling mode), ``tool`` messages
  answering their ``tool_call_id``;
- in text mode (no message makes a tool call: version 1, and version 2's
  text-based configurations) the agent writes its command in a code block
  and the harness answers with a *user* message (``<returncode>...``,
  ``<output>...``): with ``--observations`` ``auto`` or ``user-after-action``
  each user message after an action is a tool turn answering it (see
  ``memtape.lab.importers.observations``);
- the ``exit`` message (version 2: the run's end, its status and
  submission, never sent to the model) is left out and counted.
"""

from collections import deque

from memtape.core.errors import BadInput
from memtape.lab.importers import openai_chat
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.observations import note, pairs
from memtape.lab.importers.records import Source
from memtape.lab.importers.transcript import Transcript, Turns

FORMAT = "mini-swe-agent"
"""The name ``--format`` gives this format."""

EXIT = "exit"
"""The role of the message that ends a version 2 run."""


def read(source: Source, *, observations: str = "auto") -> Transcript:
    """The turns of a mini-swe-agent trajectory."""
    messages = [record.data for record in source.records]
    found = pairs(messages, observations, text_mode_pairs=True)
    turns = Turns(source.path)
    tally = Tally(source)
    legacy: deque[str] = deque()
    ids = openai_chat.Ids()
    for index, record in enumerate(source.records):
        data, where = record.data, record.where
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a message is an object with role and content")
        calls, results = ids(data)
        more_calls, more_results = found.ids(index)
        if data.get("role") == EXIT:
            tally.left_out("exit message", where, calls=calls, results=results)
            continue
        openai_chat.message(
            data,
            where,
            turns,
            legacy,
            action=found.actions.get(index),
            observed=found.observations.get(index),
        )
        tally.took(where, calls=calls + more_calls, results=results + more_results)
    return turns.transcript(FORMAT, notes=note(found), tally=tally)
