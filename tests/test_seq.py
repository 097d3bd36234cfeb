"""Seq behaves like an immutable list, version by version."""

import bisect
import pickle
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtape.core.seq import Seq, bisect_left, bisect_right


def first(pair: tuple[int, str]) -> int:
    return pair[0]


batches = st.lists(st.lists(st.integers(), max_size=5), max_size=12)


class TestSeqAsAList:
    @given(batches)
    def test_every_version_equals_its_list_model(self, steps: list[list[int]]) -> None:
        """Appending and extending gives the items a list would hold, at every version."""
        seq: Seq[int] = Seq()
        model: list[int] = []
        versions = [(seq, list(model))]
        for step in steps:
            seq = seq.append(step[0]) if len(step) == 1 else seq.extend(step)
            model.extend(step)
            versions.append((seq, list(model)))
        for version, expected in versions:
            assert expected == list(version)
            assert len(expected) == len(version)

    @given(st.lists(st.integers(), max_size=20), st.integers(-25, 25))
    def test_indexing_matches_a_list(self, items: list[int], index: int) -> None:
        seq = Seq(items)
        if -len(items) <= index < len(items):
            assert items[index] == seq[index]
        else:
            with pytest.raises(IndexError):
                seq[index]

    @given(st.lists(st.integers(), max_size=20), st.slices(25))
    def test_slicing_matches_a_list_as_a_tuple(self, items: list[int], where: slice) -> None:
        assert tuple(items[where]) == Seq(items)[where]

    @given(st.integers(0, 1100).flatmap(lambda n: st.tuples(st.just(n), st.slices(n))))
    def test_slicing_a_long_seq_matches_a_tuple(self, case: tuple[int, slice]) -> None:
        size, where = case

        assert tuple(range(size))[where] == Seq(range(size))[where]

    def test_a_long_slice_near_the_end_does_not_walk_the_items_before_it(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A tail of a long COLD or HOT costs what it takes, not the whole sequence."""
        seq = Seq(range(5000))

        def walked(_: Seq[int]) -> Iterator[int]:
            raise AssertionError("the slice walked the sequence from its first item")

        monkeypatch.setattr(Seq, "__iter__", walked)

        assert (tuple(range(4900, 5000)), tuple(range(1000, 1040))) == (seq[4900:], seq[1000:1040])

    @pytest.mark.parametrize("size", [31, 32, 33, 1024, 1025, 1057, 32 * 32 * 32 + 33])
    def test_sizes_across_the_levels_of_the_trie(self, size: int) -> None:
        """Every item is where a list has it, around each point where the trie grows."""
        items = list(range(size))
        seq = Seq(items)

        assert items == list(seq)
        assert [items[i] for i in (0, 31 % size, size // 2, -1)] == [
            seq[i] for i in (0, 31 % size, size // 2, -1)
        ]

    @pytest.mark.parametrize("size", [0, 1, 32, 33, 64, 65, 1056, 1057, 1058, 32 * 32 * 32 + 33])
    def test_built_at_once_it_is_the_seq_the_appends_build(self, size: int) -> None:
        """Same items, same hash, and the same again after one more append: the same trie."""
        at_once, appended = Seq(range(size)), Seq[int]().extend(range(size))

        assert (at_once, hash(at_once)) == (appended, hash(appended))
        assert appended.append(-1) == at_once.append(-1)

    @pytest.mark.parametrize(
        ("size", "length"),
        [
            (0, 0),
            (40, 0),
            (40, 33),
            (40, 31),
            (1057, 1024),
            (1057, 1025),
            (1057, 32),
            (32 * 32 * 32 + 33, 1056),
            (32 * 32 * 32 + 33, 32 * 32 * 32 + 1),
            (5000, 4999),
        ],
    )
    def test_a_prefix_is_the_seq_of_its_items(self, size: int, length: int) -> None:
        """Same items and the same trie as built at once, around each level; and so again
        after appends (a trie of another shape would compare unequal, or misplace them)."""
        prefix = Seq(range(size)).prefix(length)

        assert (Seq(range(length)), hash(Seq(range(length)))) == (prefix, hash(prefix))
        assert Seq(range(length + 40)) == prefix.extend(range(length, length + 40))
        assert list(range(length + 40)) == list(prefix.extend(range(length, length + 40)))

    @given(st.integers(0, 1200), st.data())
    def test_any_prefix_then_extend_matches_a_list(self, size: int, data: st.DataObject) -> None:
        length = data.draw(st.integers(0, size))
        more = data.draw(st.lists(st.integers(), max_size=40))
        seq = Seq(range(size))

        changed = seq.prefix(length).extend(more)

        assert [*range(length), *more] == list(changed)
        assert Seq([*range(length), *more]) == changed
        assert list(range(size)) == list(seq)

    @given(st.lists(st.integers(0, 60), max_size=1200), st.integers(-1, 62))
    def test_bisection_matches_the_standard_librarys(self, items: list[int], x: int) -> None:
        """Left and right, with and without a key, across leaves, tail and levels."""
        items.sort()
        seq = Seq(items)

        assert bisect.bisect_left(items, x) == bisect_left(seq, x)
        assert bisect.bisect_right(items, x) == bisect_right(seq, x)
        pairs = [(item, str(item)) for item in items]
        assert bisect.bisect_left(pairs, x, key=first) == bisect_left(Seq(pairs), x, key=first)
        assert bisect.bisect_right(pairs, x, key=first) == bisect_right(Seq(pairs), x, key=first)

    def test_a_prefix_out_of_range_is_refused(self) -> None:
        with pytest.raises(IndexError, match=r"prefix 4 out of range 0\.\.3"):
            Seq([1, 2, 3]).prefix(4)

    @given(st.integers(0, 1100))
    def test_reversed_matches_a_list(self, size: int) -> None:
        assert list(range(size))[::-1] == list(reversed(Seq(range(size))))

    def test_earlier_versions_do_not_change(self) -> None:
        first = Seq([1, 2])
        first.append(3)
        first.extend([4, 5])

        assert [1, 2] == list(first)


class TestSeqAsAValue:
    @given(st.lists(st.integers(), max_size=10), st.lists(st.integers(), max_size=10))
    def test_equal_exactly_when_the_items_are(self, a: list[int], b: list[int]) -> None:
        assert (a == b) == (Seq(a) == Seq(b))

    def test_equal_sequences_hash_alike(self) -> None:
        assert hash(Seq([1, 2, 3])) == hash(Seq([1]).extend([2, 3]))

    def test_a_seq_is_not_equal_to_a_list(self) -> None:
        assert Seq([1]) != [1]

    def test_extending_with_nothing_returns_the_same_seq(self) -> None:
        seq = Seq([1])

        assert seq is seq.extend([])

    def test_pickles(self) -> None:
        seq = Seq(["a", "b"])

        assert seq == pickle.loads(pickle.dumps(seq))

    def test_repr_shows_the_items(self) -> None:
        assert "Seq([1, 2])" == repr(Seq([1, 2]))
