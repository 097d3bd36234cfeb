"""``memtape generate``: a seeded scenario file (a support session, or a store workload)."""

import argparse

from memtape.commandline.writing import write_scenario
from memtape.lab.blocks_workload import blocks_workload
from memtape.lab.expiry_workload import expiry_workload
from memtape.lab.generate import store_workload, support_session
from memtape.lab.judged_workload import judged_workload
from memtape.lab.recall_workload import recall_workload
from memtape.lab.temporal_workload import temporal_workload


def support(args: argparse.Namespace) -> int:
    """Write a support session with planted probes."""
    return write_scenario(
        args.out,
        lambda: support_session(
            args.turns,
            args.seed,
            budget=args.budget,
            hot_n=args.hot_n,
            probe_every=args.probe_every,
        ),
    )


def store(args: argparse.Namespace) -> int:
    """Write a store workload: writes, rewrites and queries."""
    return write_scenario(
        args.out,
        lambda: store_workload(
            args.steps,
            args.seed,
            customers=args.customers,
            capacity=args.capacity,
        ),
    )


def expiry(args: argparse.Namespace) -> int:
    """Write an expiry workload: durable facts, session notes under a TTL, promotions."""
    return write_scenario(
        args.out,
        lambda: expiry_workload(
            args.steps, args.seed, customers=args.customers, capacity=args.capacity
        ),
    )


def temporal(args: argparse.Namespace) -> int:
    """Write a bi-temporal workload: changes learned late, corrections, queries of the past."""
    return write_scenario(
        args.out,
        lambda: temporal_workload(
            args.steps, args.seed, customers=args.customers, capacity=args.capacity
        ),
    )


def recall(args: argparse.Namespace) -> int:
    """Write a recall session: the support session, recalling each probe once it left."""
    return write_scenario(
        args.out,
        lambda: recall_workload(
            args.turns,
            args.seed,
            budget=args.budget,
            hot_n=args.hot_n,
            probe_every=args.probe_every,
            recall_after=args.recall_after,
        ),
    )


def judged(args: argparse.Namespace) -> int:
    """Write a judged-supersession workload: facts restated under new keys, repeats,
    retractions."""
    return write_scenario(
        args.out,
        lambda: judged_workload(
            args.steps, args.seed, customers=args.customers, capacity=args.capacity
        ),
    )


def blocks(args: argparse.Namespace) -> int:
    """Write a support session whose agent notes each planted fact in a memory block."""
    return write_scenario(
        args.out,
        lambda: blocks_workload(
            args.turns,
            args.seed,
            budget=args.budget,
            hot_n=args.hot_n,
            probe_every=args.probe_every,
            limit=args.limit,
        ),
    )
