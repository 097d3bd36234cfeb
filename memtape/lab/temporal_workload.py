"""A seeded workload of facts that change in the world: customers move, change plans and
phone numbers, the store often learning of it late, with queries about the past.

Every choice comes from one ``random.Random(seed)``, in a fixed order, so the
same arguments give a byte-identical file (as ``memtape.lab.generate``).
"""

import random

from memtape.lab.generate import NAMES
from memtape.lab.scenario_file import SEED_FORGETTING, check_count
from memtape.scenarios.writer import Value, scenario_file

CITIES = ("Lyon", "Oslo", "Porto", "Kraków", "Accra", "Osaka", "Quito", "Tartu")
PLANS = ("free", "plus", "pro", "business")
CHANGES = {
    "address": ("{name} lives in {city}", "where did {name} live"),
    "plan": ("{name} is on the {plan} plan", "which plan was {name} on"),
    "phone": ("{name}'s phone number is 555-{n:04d}", "what phone number reached {name}"),
}
"""What changes about a customer: the fact's text, and a question about the past."""

_KINDS = tuple(sorted(CHANGES))


def temporal_workload(steps: int, seed: int, *, customers: int = 8, capacity: int = 16) -> str:
    """A store workload of changes with their valid times: each write says when the change
    happened (``valid_from``, up to 50 clock units before the store learns it, which
    closes the superseded fact there); one write in ten is a correction that names no
    valid time; queries ask as of a past time, some as known at an earlier one, and
    expect the key they ask about.
    """
    check_count(steps, "--steps")
    check_count(customers, "--customers")
    check_count(capacity, "--capacity")
    forgetting: dict[str, Value] = {**SEED_FORGETTING, "capacity": capacity, "half_life": 100.0}
    rng = random.Random(seed)
    people = [f"{rng.choice(NAMES)} {chr(65 + n % 26)}{n // 26 or ''}" for n in range(customers)]
    written: list[str] = []
    known: set[str] = set()
    rows: list[dict[str, Value]] = []
    clock = 0
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.2:
            clock += rng.randint(5, 40)
            rows.append({"advance": clock})
            continue
        if roll < 0.65 or not written:
            person, kind = rng.randrange(customers), rng.choice(_KINDS)
            key = f"customer.{person}.{kind}"
            name = people[person]
            text = CHANGES[kind][0].format(
                name=name, city=rng.choice(CITIES), plan=rng.choice(PLANS), n=rng.randint(1, 9999)
            )
            row: dict[str, Value] = {"write": key, "text": text, "importance": 0.7}
            if rng.random() >= 0.1:
                row["valid_from"] = clock - rng.randint(0, 50)
            rows.append(row)
            if key not in known:
                known.add(key)
                written.append(key)
            continue
        key = rng.choice(written)
        _, who, kind = key.split(".")
        question = CHANGES[kind][1].format(name=people[int(who)])
        query: dict[str, Value] = {"query": question, "expect": key, "k": 3}
        query["as_of"] = clock - rng.randint(0, 60)
        if rng.random() < 0.3:
            query["known_at"] = max(0, clock - rng.randint(0, 30))
        rows.append(query)
    comment = (
        f"A generated bi-temporal workload: {steps} steps, seed {seed}, {customers} customers.\n"
        f"memtape generate temporal --steps {steps} --seed {seed} --customers {customers} "
        f"--capacity {capacity}"
    )
    info: dict[str, Value] = {
        "name": f"temporal-{steps}-seed-{seed}",
        "about": f"{steps} generated steps: changes learned late, corrections, past queries.",
    }
    return scenario_file(comment, info, {"forgetting": forgetting}, rows)
