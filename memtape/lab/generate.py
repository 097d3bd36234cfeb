"""Seeded generators of long scenarios: support sessions with probes, store workloads.

Every choice comes from one ``random.Random(seed)``, in a fixed order, so the
same arguments give a byte-identical file.
"""

import random

from memtape.lab.choices import DEFAULT_BUDGET, DEFAULT_HOT_N
from memtape.lab.scenario_file import SEED_FORGETTING, check_count, header
from memtape.scenarios.writer import Value, scenario_file

NAMES = ("Dana", "Ravi", "Mei", "Tomas", "Aisha", "Lena", "Kofi", "Sara", "Jonas", "Ines")
PRODUCTS = (
    "Globex earbuds",
    "Initech desk lamp",
    "Acme kettle",
    "Umbrella backpack",
    "Hooli phone case",
    "Stark thermos",
    "Wayne bike light",
)
CARRIERS = ("UPS", "DHL", "FedEx", "the postal service")
POLICIES = (
    "policy search: refunds within 30 days of purchase, in the original packaging.",
    "policy search: after the 30-day window a 10% restocking fee applies.",
    "policy search: warranty claims need the order number and a photo of the fault.",
    "policy search: express shipping is refunded when a parcel arrives late.",
    "policy search: gift cards cannot be refunded or exchanged for cash.",
)
CHATTER = (
    "Okay, thanks for checking that for me.",
    "Alright, that makes sense, I suppose.",
    "Sorry, my connection dropped for a moment there.",
    "Great, I appreciate the quick answer.",
    "Hmm, let me think about that for a second.",
    "It is raining here again today, typical.",
    "Sure, no rush, I can wait a minute.",
)
REPLIES = (
    "Let me look that up for you.",
    "I understand, let me check what I can do about it.",
    "Thanks for your patience while I check the details.",
    "I can help with that; one moment while I pull up the records.",
    "Happy to help. Is there anything else about this order?",
)


def support_session(
    turns: int,
    seed: int,
    *,
    budget: int = DEFAULT_BUDGET,
    hot_n: int = DEFAULT_HOT_N,
    probe_every: int = 40,
) -> str:
    """A long support session: customers, orders, tool lookups and chatter.

    About every ``probe_every`` turns a fact that matters is planted as a
    probe, visible from its turn on: a refund amount in a tool result
    (salient) or an account number the user says (chatter to a tiered
    policy). No other turn contains a probe's string.
    """
    check_count(turns, "--turns")
    policies = header(budget, hot_n)
    check_count(probe_every, "--probe-every")
    rng = random.Random(seed)
    amounts = iter(rng.sample(range(10_000, 99_999), turns // probe_every + 1))
    accounts = iter(rng.sample(range(100_000, 999_999), turns // probe_every + 1))
    steps: list[dict[str, Value]] = []
    probes: list[dict[str, Value]] = []
    order = 4000
    name = rng.choice(NAMES)
    product = rng.choice(PRODUCTS)
    for turn in range(1, turns + 1):
        if turn % 60 == 1:
            order += rng.randint(1, 97)
            name, product = rng.choice(NAMES), rng.choice(PRODUCTS)
        if turn % probe_every == 0:
            if rng.random() < 0.5:
                cents = next(amounts)
                probe = f"${cents // 100}.{cents % 100:02d}"
                text = f"refund calculator: order ORD-{order} comes to {probe} after fees"
                role = "tool"
            else:
                probe = f"ACC-{next(accounts)}"
                text = f"My account number is {probe}, in case you need it for {product}."
                role = "user"
            probes.append({"text": probe, "from": turn})
        else:
            role, text = _turn(rng, name, product, order)
        steps.append({"turn": role, "text": text})
    comment = (
        f"A generated support session: {turns} turns, seed {seed}.\n"
        f"memtape generate support --turns {turns} --seed {seed} (probes every {probe_every})"
    )
    info: dict[str, Value] = {
        "name": f"support-{turns}-seed-{seed}",
        "about": f"{turns} generated support turns with {len(probes)} planted probes.",
    }
    return scenario_file(comment, info, policies, steps, probes)


def _turn(rng: random.Random, name: str, product: str, order: int) -> tuple[str, str]:
    """One ordinary turn: a question, a reply, a lookup, or chatter."""
    roll = rng.random()
    if roll < 0.25:
        asks = (
            f"Hi, this is {name}. Can you check where order ORD-{order} is?",
            f"The {product} from order ORD-{order} arrived damaged, what can I do?",
            f"Could you tell me what warranty comes with the {product}?",
            f"I would like to return the {product}; how long do I have?",
            f"Is there any update on ORD-{order}? It has been a while now.",
        )
        return "user", rng.choice(asks)
    if roll < 0.45:
        return "assistant", rng.choice(REPLIES)
    if roll < 0.7:
        lookups = (
            f"order lookup: ORD-{order} shipped {rng.randint(1, 28)} days ago via "
            f"{rng.choice(CARRIERS)}, tracking TRK{rng.randint(10**7, 10**8 - 1)}.",
            f"product search: the {product} carries a {rng.randint(1, 3)}-year limited warranty.",
            rng.choice(POLICIES),
            f"inventory: {rng.randint(0, 40)} units of the {product} in stock for an exchange.",
        )
        return "tool", rng.choice(lookups)
    return "user", rng.choice(CHATTER)


ATTRIBUTES = {
    "email": ("{name}'s email is {first}.{n}@example.com", "what email address does {name} use"),
    "phone": ("{name}'s phone number is 555-{n:04d}", "what phone number reaches {name}"),
    "address": ("{name} lives at {n} Elm Street", "where does {name} live"),
    "plan": ("{name} is on the {tier} plan", "which plan is {name} on"),
    "contact": ("{name} prefers to be contacted by {channel}", "how should we contact {name}"),
    "order": ("{name}'s latest order is ORD-{n}", "what is {name}'s latest order"),
}
"""A fact about a customer per attribute: its text, and a question that asks for it."""

_ATTRIBUTE_NAMES = tuple(sorted(ATTRIBUTES))


def store_workload(
    steps: int,
    seed: int,
    *,
    customers: int = 12,
    capacity: int = 4,
) -> str:
    """A store workload: facts written about customers, rewritten (a newer fact on the
    same key), the clock moving on, and queries that ask for one key and expect it.
    Its header has the seed's forgetting policy only: it has no turns to compact.

    A query's text shares words with the fact it expects, so a policy that
    ranks by relevance can find it; a policy that ranks by the clock alone
    may not. No step reads by key, so every step is valid under any policy.
    """
    check_count(steps, "--steps")
    check_count(customers, "--customers")
    check_count(capacity, "--capacity")
    policies: dict[str, dict[str, Value]] = {
        "forgetting": {**SEED_FORGETTING, "capacity": capacity}
    }
    rng = random.Random(seed)
    people = [f"{rng.choice(NAMES)} {chr(65 + n % 26)}{n // 26 or ''}" for n in range(customers)]
    # ``written`` keeps the order the queries draw from; ``known`` answers membership
    # without a scan that grows with the keys.
    written: list[str] = []
    known: set[str] = set()
    rows: list[dict[str, Value]] = []
    clock = 0
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.15:
            clock += rng.randint(1, 4)
            rows.append({"advance": clock})
        elif roll < 0.55 or not written:
            person = rng.randrange(customers)
            attribute = rng.choice(_ATTRIBUTE_NAMES)
            key = f"customer.{person}.{attribute}"
            name = people[person]
            text = ATTRIBUTES[attribute][0].format(
                name=name,
                first=name.split()[0].lower(),
                n=rng.randint(1, 9999),
                tier=rng.choice(("free", "plus", "pro", "business")),
                channel=rng.choice(("email", "phone", "text message", "post")),
            )
            rows.append({"write": key, "text": text, "importance": rng.randint(10, 100) / 100})
            if key not in known:
                known.add(key)
                written.append(key)
        else:
            key = rng.choice(written)
            _, who, attribute = key.split(".")
            question = ATTRIBUTES[attribute][1].format(name=people[int(who)])
            rows.append({"query": question, "expect": key, "k": 3})
    comment = (
        f"A generated store workload: {steps} steps, seed {seed}, {customers} customers.\n"
        f"memtape generate store --steps {steps} --seed {seed} --customers {customers} "
        f"--capacity {capacity}"
    )
    info: dict[str, Value] = {
        "name": f"store-{steps}-seed-{seed}",
        "about": f"{steps} generated store steps: writes, rewrites of a key, and keyed queries.",
    }
    return scenario_file(comment, info, policies, rows)
