"""A life as ``why --json`` writes it and as ``memtape why`` prints it."""

from collections.abc import Iterator, Mapping
from typing import Any

from memtape.projections.audit.lives import Life
from memtape.projections.audit.targets import BlockTarget, FactTarget, KeyTarget, Target, TurnTarget


def life_data(life: Life) -> dict[str, Any]:
    """The life as JSON-ready data (the ``why --json`` contract); numbers are exact."""
    return {
        "target": _target_data(life.target),
        "subjects": [
            {
                "kind": subject.kind,
                "id": subject.id,
                "label": subject.label,
                "steps": [
                    {
                        "at": s.at,
                        "step": s.step,
                        "type": s.type,
                        "clock": s.clock,
                        "what": s.what,
                        "numbers": dict(s.numbers),
                    }
                    for s in subject.steps
                ],
                "now": {
                    "status": subject.now.status,
                    "what": subject.now.what,
                    "numbers": dict(subject.now.numbers),
                },
            }
            for subject in life.subjects
        ],
    }


def _target_data(target: Target) -> dict[str, Any]:
    match target:
        case TurnTarget(turn=turn):
            return {"kind": "turn", "turn": turn}
        case FactTarget(id=fact_id):
            return {"kind": "fact", "id": fact_id}
        case KeyTarget(key=key):
            return {"kind": "key", "key": key}
        case BlockTarget(label=label):
            return {"kind": "block", "label": label}


def render_life(life: Life) -> Iterator[str]:
    """The lines of ``memtape why``: per subject, a heading, one line per step, where it ends."""
    for subject in life_data(life)["subjects"]:
        yield subject["label"]
        for step in subject["steps"]:
            yield f"{step['at']:>5}  step {step['step']:>4}  {step['type']:<19} {step['what']}"
            factors = step["numbers"].get("factors")
            if factors is not None:
                yield f"{'':<37} = {_product(factors)}"
        now = subject["now"]
        yield f"{'':<5}  {now['what']}"
        if "factors" in now["numbers"]:
            yield f"{'':<37} = {_product(now['numbers']['factors'])}"


def _product(factors: Mapping[str, float]) -> str:
    return " × ".join(f"{name} {value:.4f}" for name, value in factors.items())
