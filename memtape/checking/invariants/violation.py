"""A broken invariant: where in the run, which, and why."""

import attrs


@attrs.frozen
class Violation:
    """An invariant a run breaks: where (an event position), which, and why."""

    position: int
    invariant: str
    message: str

    def __str__(self) -> str:
        if not self.position:
            return f"header: {self.message}"
        return f"event {self.position}: {self.invariant}: {self.message}"
