"""memtape.core.collector: the collector paused while a block builds objects to keep."""

import gc

import pytest

from memtape.core.collector import collector_paused


class Kept:
    """An object the collector tracks, standing for what a load builds."""


class TestCollectorPaused:
    @pytest.mark.parametrize("enabled", [True, False])
    def test_the_collector_comes_back_as_it_was(self, enabled: bool) -> None:
        before = gc.isenabled()
        (gc.enable if enabled else gc.disable)()
        try:
            with collector_paused():
                assert not gc.isenabled()
            assert enabled == gc.isenabled()
        finally:
            (gc.enable if before else gc.disable)()

    def test_what_the_block_built_is_filed_as_long_lived(self) -> None:
        """Objects built in the block skip the young generations, where the next
        collection would walk every one of them."""
        with collector_paused():
            kept = Kept()
        assert any(o is kept for o in gc.get_objects(generation=2))
        assert not any(o is kept for o in gc.get_objects(generation=0))

    def test_a_program_s_own_frozen_objects_stay_frozen(self) -> None:
        """(Not by the freeze count: a frozen object that dies meanwhile, anywhere in the
        process, lowers it.) A frozen object is in no generation."""
        mine = Kept()
        gc.freeze()
        try:
            with collector_paused():
                kept = Kept()
            assert not any(o is mine for o in gc.get_objects())
            assert any(o is kept for o in gc.get_objects(generation=0))
        finally:
            gc.unfreeze()
        assert any(o is mine for o in gc.get_objects())
