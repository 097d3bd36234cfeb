"""memtape.reducers.memory: episodes queued, consolidation passes prune and distill."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.errors import CorruptLog
from memtape.core.events import Consolidated, EpisodeRecorded, ProceduralRule, SemanticFact
from memtape.core.state import EMPTY_MEMORY, Memory
from memtape.reducers.memory import consolidated, episode_recorded


def _memory(count: int) -> Memory:
    memory = EMPTY_MEMORY
    for n in range(1, count + 1):
        memory = episode_recorded(memory, EpisodeRecorded(n, f"episode {n}"))
    return memory


FACT = SemanticFact("user.name", "user.name = Dana", 0.9, 2)
RULE = ProceduralRule("apply the fee", 1)


class TestEpisodeRecorded:
    def test_an_episode_waits_in_order(self) -> None:
        assert [EpisodeRecorded(1, "episode 1"), EpisodeRecorded(2, "episode 2")] == list(
            _memory(2).episodes
        )

    def test_an_episode_counts_as_recorded(self) -> None:
        assert 3 == _memory(3).recorded

    @pytest.mark.parametrize("episode", [1, 4])
    def test_an_episode_out_of_sequence_is_corrupt(self, episode: int) -> None:
        with pytest.raises(CorruptLog, match=f"episode {episode} cannot follow episode 2"):
            episode_recorded(_memory(2), EpisodeRecorded(episode, "x"))

    def test_numbering_continues_after_a_pass(self) -> None:
        memory = consolidated(_memory(2), Consolidated((1, 2), (), ()))

        assert [3] == [e.id for e in episode_recorded(memory, EpisodeRecorded(3, "x")).episodes]


class TestConsolidated:
    def test_consumed_episodes_are_pruned(self) -> None:
        assert [] == list(consolidated(_memory(3), Consolidated((1, 2, 3), (), ())).episodes)

    def test_episodes_not_consumed_stay_in_order(self) -> None:
        memory = consolidated(_memory(4), Consolidated((2, 3), (), ()))

        assert [1, 4] == [e.id for e in memory.episodes]

    def test_the_recorded_count_is_kept(self) -> None:
        assert 3 == consolidated(_memory(3), Consolidated((1, 2, 3), (), ())).recorded

    def test_distilled_facts_and_rules_are_kept(self) -> None:
        memory = consolidated(_memory(2), Consolidated((1, 2), (FACT,), (RULE,)))

        assert ([FACT], [RULE]) == (list(memory.semantic), list(memory.procedural))

    def test_later_passes_add_to_what_was_distilled(self) -> None:
        memory = consolidated(_memory(2), Consolidated((1,), (), (RULE,)))
        later = ProceduralRule("another rule", 2)

        memory = consolidated(memory, Consolidated((2,), (FACT,), (later,)))

        assert ([FACT], [RULE, later]) == (list(memory.semantic), list(memory.procedural))

    def test_a_pass_over_nothing_changes_nothing(self) -> None:
        memory = _memory(2)

        assert memory == consolidated(memory, Consolidated((), (), ()))

    def test_consuming_an_episode_never_recorded_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match=r"consumes episodes \[3\], not pending"):
            consolidated(_memory(2), Consolidated((1, 3), (), ()))

    def test_consuming_an_episode_twice_is_corrupt(self) -> None:
        memory = consolidated(_memory(2), Consolidated((1,), (), ()))

        with pytest.raises(CorruptLog, match=r"consumes episodes \[1\], not pending"):
            consolidated(memory, Consolidated((1, 2), (), ()))

    def test_the_memory_before_is_left_unchanged(self) -> None:
        before = _memory(2)

        consolidated(before, Consolidated((1, 2), (FACT,), ()))

        assert ([1, 2], []) == ([e.id for e in before.episodes], list(before.semantic))
