"""The cyclic garbage collector paused while a block builds objects that live on.

A run file's load and a command's start (its parser, its modules) build
many objects that all stay alive: the collections their allocations set
off walk them and find nothing to free. This module imports nothing of
memtape's, so ``memtape --help`` may use it too.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, file_as_old: bool = True) -> Iterator[None]:
    """Pause CPython's cyclic garbage collector while a block builds many objects to keep.

    Every object a load builds stays alive, and no cycle among them can be
    garbage; yet each allocation counts towards a collection, and each full
    collection walks every object built so far, so a million events cost
    several times their decoding. Reference counting still frees whatever
    dies. The collector's state is restored, whatever it was.

    On the way out, unless ``file_as_old`` is false, what the block built is
    filed in the oldest generation directly, as what it is: long-lived.
    Otherwise the first young collection after the pause walks every object
    of the load. ``gc.freeze()`` then ``gc.unfreeze()`` does that by
    splicing lists, without a walk; it files every young object of the
    process so, the program's own with the block's (they are then collected
    by full collections only), and it is skipped when the program keeps
    frozen objects of its own, which ``unfreeze`` would release.
    """
    was_enabled = gc.isenabled()
    keeps_frozen = gc.get_freeze_count() > 0
    gc.disable()
    try:
        yield
    finally:
        if file_as_old and not keeps_frozen:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
