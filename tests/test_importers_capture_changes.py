"""memtape.lab.importers.capture_changes: request k+1's entries beside the context before."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from memtape.lab.importers.capture_changes import Change, compare
from memtape.lab.importers.capture_entries import Entry

SYSTEM = Entry("system", ("be brief",))
ASK = Entry("user", ("ask",))
CALL = Entry("assistant", ("call f()",), ("c1",))
RESULT = Entry("tool", ("42",), answers=("c1",))
ANSWER = Entry("assistant", ("it is 42",))
NEXT = Entry("user", ("next",))
CONTEXT = [SYSTEM, ASK, CALL, RESULT, ANSWER]


class TestCompare:
    def test_the_context_then_new_entries_extends_it(self) -> None:
        change = compare(CONTEXT, [*CONTEXT, NEXT])
        assert (True, (5,)) == (change.extends, change.new)

    def test_a_prefix_gone_with_nothing_in_its_place_leaves(self) -> None:
        change = compare(CONTEXT, [SYSTEM, ANSWER, NEXT])
        assert Change(((0, 0), (4, 1)), (1, 2, 3), (), (2,)) == change

    def test_a_new_message_before_kept_ones_stands_for_what_left(self) -> None:
        summary = Entry("user", ("summary",))
        change = compare(CONTEXT, [SYSTEM, summary, ANSWER, NEXT])
        assert ((1, 2, 3), (1,), (3,)) == (change.left, change.replacement, change.new)

    def test_a_result_with_other_text_is_the_same_result_rewritten(self) -> None:
        cleared = Entry("tool", ("[cleared]",), answers=("c1",))
        change = compare(CONTEXT, [SYSTEM, ASK, CALL, cleared, ANSWER, NEXT])
        assert ((), ((3, 3),), (5,)) == (change.left, change.rewritten, change.new)

    def test_after_a_shared_head_alone_the_last_user_message_and_on_are_new(self) -> None:
        summary = Entry("user", ("summary",))
        change = compare(CONTEXT, [SYSTEM, summary, NEXT])
        assert ((1,), (2,)) == (change.replacement, change.new)

    def test_what_holds_a_call_is_never_a_summary(self) -> None:
        other = Entry("assistant", ("call g()",), ("c2",))
        change = compare(CONTEXT, [SYSTEM, other, ANSWER, NEXT])
        assert ((), (1, 3)) == (change.replacement, change.new)

    def test_entries_are_matched_by_what_they_say_not_where_they_are(self) -> None:
        change = compare([SYSTEM, ASK], [Entry("system", ("be brief",)), ASK, NEXT])
        assert (True, (2,)) == (change.extends, change.new)
