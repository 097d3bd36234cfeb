"""A seeded workload of facts that go stale: durable customer facts, session notes under a
TTL, and promotions that name their own end, with queries that ask for each.

Every choice comes from one ``random.Random(seed)``, in a fixed order, so the
same arguments give a byte-identical file (as ``memtape.lab.generate``).
"""

import random
from typing import Any

from memtape.lab.generate import ATTRIBUTES, NAMES
from memtape.lab.scenario_file import SEED_FORGETTING, check_count
from memtape.scenarios.writer import Value, scenario_file

SESSION_NOTES = (
    "{name} is asking about order ORD-{n} right now",
    "{name} is waiting on the line about a refund of ${n}",
    "{name} just said the parcel ORD-{n} is at the door",
)
"""What a session note says: true for the session, stale an hour later."""

PROMOTIONS = (
    "free shipping on orders over ${n} until the sale ends",
    "{n}% off kettles for the weekend",
    "a gift card worth ${n} with every phone case this week",
)
"""A promotion's text; the write names when it ends (``expires_at``)."""

SESSION_TTL = 1800
"""The TTL of a session note in the workload's header, in clock units."""

_ATTRIBUTE_NAMES = tuple(sorted(ATTRIBUTES))


def expiry_workload(steps: int, seed: int, *, customers: int = 12, capacity: int = 8) -> str:
    """A store workload where some facts expire: under the header's ``ttl`` session notes
    (``session.*``) leave ``SESSION_TTL`` after their write, and each promotion's write
    says when it ends; customer facts never expire. Queries ask for any key written
    so far, so a query for a note or a promotion that has expired misses, by design:
    the bench counts what expiry cost beside what it freed for the durable facts.

    Its header has the seed's forgetting policy with that ``ttl``; ``--set
    forgetting.ttl=...`` (or another policy, which keeps it) benches the alternatives.
    """
    check_count(steps, "--steps")
    check_count(customers, "--customers")
    check_count(capacity, "--capacity")
    forgetting: dict[str, Any] = {
        **SEED_FORGETTING,
        "capacity": capacity,
        "half_life": 600.0,
        "ttl": {"session.*": SESSION_TTL},
    }
    rng = random.Random(seed)
    people = [f"{rng.choice(NAMES)} {chr(65 + n % 26)}{n // 26 or ''}" for n in range(customers)]
    written: list[str] = []
    known: set[str] = set()
    rows: list[dict[str, Value]] = []
    clock = 0
    promotions = 0
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.2:
            clock += rng.randint(60, 900)
            rows.append({"advance": clock})
            continue
        if roll < 0.6 or not written:
            row, key = _write(rng, people, clock, promotions)
            promotions += key.startswith("promo.")
            rows.append(row)
            if key not in known:
                known.add(key)
                written.append(key)
            continue
        key = rng.choice(written)
        rows.append({"query": _question(key, people), "expect": key, "k": 3})
    comment = (
        f"A generated expiry workload: {steps} steps, seed {seed}, {customers} customers.\n"
        f"memtape generate expiry --steps {steps} --seed {seed} --customers {customers} "
        f"--capacity {capacity}"
    )
    info: dict[str, Value] = {
        "name": f"expiry-{steps}-seed-{seed}",
        "about": f"{steps} generated steps: durable facts, session notes under a TTL, promotions.",
    }
    return scenario_file(comment, info, {"forgetting": forgetting}, rows)


def _write(
    rng: random.Random, people: list[str], clock: int, promotions: int
) -> tuple[dict[str, Value], str]:
    """One write: a customer fact, a session note, or a promotion with its end."""
    person = rng.randrange(len(people))
    name = people[person]
    kind = rng.random()
    if kind < 0.5:
        attribute = rng.choice(_ATTRIBUTE_NAMES)
        key = f"customer.{person}.{attribute}"
        text = ATTRIBUTES[attribute][0].format(
            name=name,
            first=name.split()[0].lower(),
            n=rng.randint(1, 9999),
            tier=rng.choice(("free", "plus", "pro", "business")),
            channel=rng.choice(("email", "phone", "text message", "post")),
        )
        importance = rng.randint(30, 100) / 100
        return {"write": key, "text": text, "importance": importance}, key
    if kind < 0.85:
        key = f"session.{person}.note"
        text = rng.choice(SESSION_NOTES).format(name=name, n=rng.randint(100, 9999))
        return {"write": key, "text": text, "importance": rng.randint(40, 90) / 100}, key
    key = f"promo.{promotions + 1}"
    text = rng.choice(PROMOTIONS).format(n=rng.randint(5, 50))
    ends = clock + rng.randint(300, 3600)
    row: dict[str, Value] = {"write": key, "text": text, "importance": 0.3, "expires_at": ends}
    return row, key


def _question(key: str, people: list[str]) -> str:
    """A question sharing words with the fact it expects."""
    kind, _, rest = key.partition(".")
    if kind == "customer":
        who, _, attribute = rest.partition(".")
        return ATTRIBUTES[attribute][1].format(name=people[int(who)])
    if kind == "session":
        who = rest.partition(".")[0]
        return f"what is {people[int(who)]} asking about right now"
    return "which promotion is running"
