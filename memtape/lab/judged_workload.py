"""A seeded workload for supersession judged by a model: facts restated under new keys.

An extractor such as mem0's names no stable key: the same customer's city,
said again, arrives as a new memory. Here each write about a customer gets
a key of its own (``customer.3.address.17``), so supersession by key never
retires the fact it replaces; a judge (``supersession = "llm"``) can. The
workload mixes changes (a new value: an UPDATE), repeats of what the store
already holds (a NOOP), retractions ("no longer": a DELETE) and queries that
expect the newest key said about the thing they ask.

Every choice comes from one ``random.Random(seed)``, in a fixed order, so the
same arguments give a byte-identical file (as ``memtape.lab.generate``).
"""

import random

from memtape.lab.generate import NAMES
from memtape.lab.scenario_file import SEED_FORGETTING, check_count
from memtape.lab.temporal_workload import CHANGES, CITIES, PLANS
from memtape.scenarios.writer import Value, scenario_file

RETRACTIONS = {
    "address": "{name} no longer lives in {city}",
    "plan": "{name} is no longer on the {plan} plan",
    "phone": "{name}'s phone number 555-{n:04d} is no longer in service",
}
"""What a retraction of each kind says (the value it retracts filled in)."""

QUESTIONS = {
    "address": "where does {name} live now",
    "plan": "which plan is {name} on now",
    "phone": "what is {name}'s phone number now",
}
"""The question a query asks about each kind."""

_KINDS = tuple(sorted(CHANGES))


def judged_workload(steps: int, seed: int, *, customers: int = 8, capacity: int = 16) -> str:
    """A store workload of facts restated under new keys: half the writes change a value,
    one in five repeats the value the store holds, one in ten retracts it; the rest of
    the steps are queries that expect the key of the newest write on what they ask, and
    clock moves. The header's forgetting policy supersedes by key, for a bench beside
    ``--set forgetting.supersession=llm``.
    """
    check_count(steps, "--steps")
    check_count(customers, "--customers")
    check_count(capacity, "--capacity")
    forgetting: dict[str, Value] = {**SEED_FORGETTING, "capacity": capacity, "half_life": 100.0}
    rng = random.Random(seed)
    people = [f"{rng.choice(NAMES)} {chr(65 + n % 26)}{n // 26 or ''}" for n in range(customers)]
    held: dict[tuple[int, str], tuple[str, dict[str, Value]]] = {}
    """The newest key and values said about each (customer, kind) still held."""
    rows: list[dict[str, Value]] = []
    clock = 0
    for number in range(1, steps + 1):
        roll = rng.random()
        if roll < 0.15:
            clock += rng.randint(1, 20)
            rows.append({"advance": clock})
            continue
        if roll < 0.4 and held:
            person, kind = rng.choice(sorted(held))
            question = QUESTIONS[kind].format(name=people[person])
            rows.append({"query": question, "expect": held[person, kind][0], "k": 3})
            continue
        person, kind = rng.randrange(customers), rng.choice(_KINDS)
        key = f"customer.{person}.{kind}.{number}"
        before = held.get((person, kind))
        values: dict[str, Value] = {
            "name": people[person],
            "city": rng.choice(CITIES),
            "plan": rng.choice(PLANS),
            "n": rng.randint(1, 9999),
        }
        use = rng.random()
        if before is not None and use < 0.2:
            text = RETRACTIONS[kind].format(**before[1])
            del held[person, kind]
        else:
            if before is not None and use < 0.4:
                values = before[1]
            text = CHANGES[kind][0].format(**values)
            held[person, kind] = (key, values)
        rows.append({"write": key, "text": text, "importance": 0.7})
    comment = (
        f"A generated judged-supersession workload: {steps} steps, seed {seed}, "
        f"{customers} customers.\n"
        f"memtape generate judged --steps {steps} --seed {seed} --customers {customers} "
        f"--capacity {capacity}"
    )
    info: dict[str, Value] = {
        "name": f"judged-{steps}-seed-{seed}",
        "about": f"{steps} generated steps: facts restated under new keys, repeats, retractions.",
    }
    return scenario_file(comment, info, {"forgetting": forgetting}, rows)
