"""What an agent did to its context between two requests of a conversation.

Request k and its response left a context (its entries, ``memtape.lab.
importers.capture_entries``); request k+1 sends entries too. Lined up by
identity, not by position (an entry is the same when its ``slot`` is: a
tool result by its call id, an assistant message with calls by their ids,
anything else by its whole key), in order, each of request k+1's entries
matched with the first entry of the context after the last one matched:

- nothing of the context is missing, and the new entries all come after
  the last one matched: request k+1 extends the context (``extends``);
- entries of the context are missing (``left``) and nothing stands in
  their place: a truncation;
- entries are missing and request k+1 holds new entries before ones it
  kept (``replacement``): a summary stands for what left. When request k+1
  keeps only a head the two share, the new entries after it are the
  replacement up to the last user message, which with what follows it is
  new: an agent that rewrote its whole context sends its summary, then
  the user's next message;
- an entry matched by its slot whose key changed (a tool result's text
  rewritten in place) is ``rewritten``.
"""

from collections.abc import Sequence

import attrs

from memtape.lab.importers.capture_entries import Entry


@attrs.frozen
class Change:
    """How request k+1's entries stand to the context before them (indices into each)."""

    kept: tuple[tuple[int, int], ...]
    """Each context entry sent again, and where in request k+1."""
    left: tuple[int, ...]
    """The context entries request k+1 no longer sends."""
    replacement: tuple[int, ...]
    """Request k+1's new entries that stand for what left (a summary)."""
    new: tuple[int, ...]
    """Request k+1's new entries that are conversation (turns to add)."""
    rewritten: tuple[tuple[int, int], ...] = ()
    """The kept entries whose text request k+1 changed in place."""

    @property
    def extends(self) -> bool:
        """Whether request k+1 is the context and new entries after it, nothing changed."""
        return not self.left and not self.replacement and not self.rewritten


def compare(context: Sequence[Entry], sent: Sequence[Entry]) -> Change:
    """How ``sent`` (request k+1's entries) stands to ``context`` (see the module's
    docstring)."""
    size = len(context)
    if len(sent) >= size and all(
        old is new or old.key == new.key for old, new in zip(context, sent, strict=False)
    ):
        return Change(tuple((i, i) for i in range(size)), (), (), tuple(range(size, len(sent))))
    places: dict[tuple[str, ...], list[int]] = {}
    for index, entry in enumerate(context):
        slot = entry.slot
        if slot in places:
            places[slot].append(index)
        else:
            places[slot] = [index]
    taken_at: dict[tuple[str, ...], int] = {}
    matched: dict[int, int] = {}
    last = -1
    for index, entry in enumerate(sent):
        slot = entry.slot
        found = places.get(slot)
        if found is None:
            continue
        at = taken_at.get(slot, 0)
        while at < len(found) and found[at] <= last:
            at += 1
        if at < len(found):
            last = found[at]
            matched[index] = last
            at += 1
        taken_at[slot] = at
    kept = tuple(matched.items())
    taken = set(matched.values())
    left = tuple(i for i in range(size) if i not in taken)
    final = max(matched, default=-1)
    inserted = [j for j in range(final) if j not in matched]
    new = list(range(final + 1, len(sent)))
    if left and not inserted and _head_only(kept):
        users = [j for j in new[1:] if sent[j].role == "user"]
        if users:
            inserted, new = [j for j in new if j < users[-1]], [j for j in new if j >= users[-1]]
    if any(sent[j].calls or sent[j].answers for j in inserted) or (inserted and not left):
        # What holds calls or results is conversation, not a summary; so is an entry put in
        # before kept ones when nothing left.
        new = sorted([*inserted, *new])
        inserted = []
    rewritten = tuple((i, j) for j, i in kept if context[i].key != sent[j].key)
    return Change(tuple((i, j) for j, i in kept), left, tuple(inserted), tuple(new), rewritten)


def _head_only(kept: tuple[tuple[int, int], ...]) -> bool:
    """Whether the entries kept are a head both sides share (the first n of each)."""
    return all(j == n and i == n for n, (j, i) in enumerate(kept))
