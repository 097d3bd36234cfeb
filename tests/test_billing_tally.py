"""The bill of a run, request by request, on sessions whose figures are computed by hand.

Turns are counted in words (``tokenizer = "words"``: the words of ``"{role}: {text}"``),
so a turn of ``said(n)`` is ``n`` tokens. A request goes out after each turn that is
not the assistant's; an assistant turn is the output of the request before it.
"""

import pytest

from memtape.policies.session import Session
from memtape.projections.billing.prices import Price
from memtape.projections.billing.tally import CostMetrics, CostTally
from memtape.scenarios import parse_scenario

CLAUDE = Price("claude", "anthropic", 3.0, 15.0, 0.3, 3.75, 6.0, cache_minimum=1024)
GPT = Price("gpt", "openai", 1.25, 10.0, 0.125, 1.25, cache_minimum=1024)
GEMINI = Price("gemini", "google", 0.3, 2.5, 0.03, 0.3, cache_minimum=1024)


def said(tokens: int) -> str:
    """A turn's text that, with its role, counts ``tokens`` words."""
    return " ".join(["w"] * (tokens - 1))


def billed(steps: str, price: Price, *, ttl: str = "5m", policy: str = "none") -> CostMetrics:
    """Run a session of ``steps`` (TOML step tables) under ``policy`` and bill it."""
    text = f'[compaction]\npolicy = "{policy}"\nbudget = 2500\ntokenizer = "words"\n\n{steps}'
    scenario = parse_scenario(text, "test.toml")
    session = Session(scenario.policies)
    tally = CostTally(price, ttl)
    for command in scenario.steps:
        before = session.state
        events = session.execute(command)
        tally.step(command, events, before, session.state, len(session.run) - len(events))
    return tally.metrics()


def turn(role: str, tokens: int) -> str:
    return f'[[step]]\nturn = "{role}"\ntext = "{said(tokens)}"\n\n'


def advance(to: float) -> str:
    return f"[[step]]\nadvance = {to}\n\n"


HIT = turn("user", 1100) + turn("assistant", 50) + turn("user", 100)
"""A prompt of 1,100 tokens, its answer of 50, then 100 more: the second prompt shares
the first's 1,150 tokens."""

LATE = turn("user", 1100) + turn("assistant", 50) + advance(301) + turn("user", 100)
"""The same, the second request 301 seconds after the first (past a 5-minute TTL)."""

SHORT = turn("user", 500) + turn("assistant", 50) + turn("user", 100)
"""The same below every provider's 1,024-token minimum."""

SLIDING = (
    turn("user", 1100)
    + turn("assistant", 50)
    + turn("user", 1100)
    + turn("assistant", 50)
    + turn("user", 1100)
)
"""Under a sliding window of 2,500 tokens the last turn takes the window to 3,400, and
the first turn (1,100) is dropped: the third prompt shares no item with the second."""


class TestAnthropic:
    def test_a_first_request_writes_its_prompt_and_a_second_reads_it(self) -> None:
        metrics = billed(HIT, CLAUDE)
        # Request 1: 1,100 written. Request 2 (1,250): the entry at the last breakpoint
        # of request 1 (1,100) read, the 150 after it written.
        expected = (1_100 * 3.75 + 50 * 15.0 + 1_100 * 0.3 + 150 * 3.75) / 1e6
        assert (0, 1_100, 1_250) == (
            metrics.billed_input_tokens,
            metrics.cache_read_tokens,
            metrics.cache_write_tokens,
        )
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_an_entry_past_its_five_minutes_is_written_again(self) -> None:
        metrics = billed(LATE, CLAUDE)
        expected = (1_100 * 3.75 + 50 * 15.0 + 1_250 * 3.75) / 1e6
        assert (0, 2_350) == (metrics.cache_read_tokens, metrics.cache_write_tokens)
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_one_hour_entry_outlives_the_gap_at_the_one_hour_write_price(self) -> None:
        metrics = billed(LATE, CLAUDE, ttl="1h")
        expected = (1_100 * 6.0 + 50 * 15.0 + 1_100 * 0.3 + 150 * 6.0) / 1e6
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_prompt_below_the_minimum_is_billed_as_input(self) -> None:
        metrics = billed(SHORT, CLAUDE)
        expected = (500 * 3.0 + 50 * 15.0 + 650 * 3.0) / 1e6
        assert (1_150, 0, 0) == (
            metrics.billed_input_tokens,
            metrics.cache_read_tokens,
            metrics.cache_write_tokens,
        )
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_compaction_that_drops_the_first_turn_breaks_the_cached_prefix(self) -> None:
        metrics = billed(SLIDING, CLAUDE, policy="sliding-window")
        # Request 1 writes 1,100; request 2 (2,250) reads it and writes 1,150; request 3
        # (2,300, the first turn gone) shares nothing: it writes all of it.
        expected = (
            1_100 * 3.75 + 50 * 15.0 + 1_100 * 0.3 + 1_150 * 3.75 + 50 * 15.0 + 2_300 * 3.75
        ) / 1e6
        assert (1, 1_100, 4_550) == (
            metrics.cache_breaks,
            metrics.cache_read_tokens,
            metrics.cache_write_tokens,
        )
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_the_broken_request_names_the_compaction_that_broke_it(self) -> None:
        metrics = billed(SLIDING, CLAUDE, policy="sliding-window")
        # Events: five turns, then the compaction after the fifth: event 6.
        assert [None, None, 6] == [request.broken_by for request in metrics.requests]


class TestOpenAI:
    def test_a_second_request_reads_the_first_in_128_token_blocks_from_1024(self) -> None:
        metrics = billed(HIT, GPT)
        # Request 1's 1,100 tokens are cached as 1,024 (76 short of a next block);
        # request 2 (1,250) reads those 1,024 and pays the other 226 as input.
        expected = (1_100 * 1.25 + 50 * 10.0 + 1_024 * 0.125 + 226 * 1.25) / 1e6
        assert (1_326, 1_024, 0) == (
            metrics.billed_input_tokens,
            metrics.cache_read_tokens,
            metrics.cache_write_tokens,
        )
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_cache_idle_past_five_minutes_is_gone(self) -> None:
        metrics = billed(LATE, GPT)
        expected = (1_100 * 1.25 + 50 * 10.0 + 1_250 * 1.25) / 1e6
        assert 0 == metrics.cache_read_tokens
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_prompt_below_1024_tokens_is_not_cached(self) -> None:
        metrics = billed(SHORT, GPT)
        expected = (500 * 1.25 + 50 * 10.0 + 650 * 1.25) / 1e6
        assert 0 == metrics.cache_read_tokens
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_compaction_that_drops_the_first_turn_breaks_the_cached_prefix(self) -> None:
        metrics = billed(SLIDING, GPT, policy="sliding-window")
        # Request 2 (2,250) reads request 1's 1,024; request 3 (2,300) reads nothing.
        expected = (
            1_100 * 1.25 + 50 * 10.0 + 1_024 * 0.125 + 1_226 * 1.25 + 50 * 10.0 + 2_300 * 1.25
        ) / 1e6
        assert (1, 1_024) == (metrics.cache_breaks, metrics.cache_read_tokens)
        assert expected == pytest.approx(metrics.usd, rel=1e-12)


class TestGoogle:
    def test_a_second_request_reads_the_whole_prefix_the_first_cached(self) -> None:
        metrics = billed(HIT, GEMINI)
        expected = (1_100 * 0.3 + 50 * 2.5 + 1_100 * 0.03 + 150 * 0.3) / 1e6
        assert (1_250, 1_100, 0) == (
            metrics.billed_input_tokens,
            metrics.cache_read_tokens,
            metrics.cache_write_tokens,
        )
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_cache_idle_past_five_minutes_is_gone(self) -> None:
        metrics = billed(LATE, GEMINI)
        expected = (1_100 * 0.3 + 50 * 2.5 + 1_250 * 0.3) / 1e6
        assert (2_350, 0) == (metrics.billed_input_tokens, metrics.cache_read_tokens)
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_prompt_below_the_minimum_is_not_cached(self) -> None:
        metrics = billed(SHORT, GEMINI)
        # Both prompts (500, then 650) are below 1,024: billed whole as input.
        expected = (500 * 0.3 + 50 * 2.5 + 650 * 0.3) / 1e6
        assert (1_150, 0) == (metrics.billed_input_tokens, metrics.cache_read_tokens)
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_compaction_that_drops_the_first_turn_breaks_the_cached_prefix(self) -> None:
        metrics = billed(SLIDING, GEMINI, policy="sliding-window")
        expected = (
            1_100 * 0.3 + 50 * 2.5 + 1_100 * 0.03 + 1_150 * 0.3 + 50 * 2.5 + 2_300 * 0.3
        ) / 1e6
        assert (1, 1_100) == (metrics.cache_breaks, metrics.cache_read_tokens)
        assert expected == pytest.approx(metrics.usd, rel=1e-12)


class TestPinnedPrefix:
    def test_a_pinned_prefix_is_read_after_a_compaction_rewrites_what_follows(self) -> None:
        steps = (
            '[[step]]\nturn = "system"\ntext = "'
            + said(1100)
            + '"\npin = true\n\n'
            + turn("user", 700)
            + turn("assistant", 50)
            + turn("user", 700)
        )
        metrics = billed(steps, CLAUDE, policy="sliding-window")
        # Request 1 (system 1,100): written. Request 2 (1,800): reads 1,100, writes 700.
        # Request 3: 2,550 over 2,500, the user's 700 dropped: the prompt (system, 50, 700)
        # shares the pinned 1,100 only, which its breakpoint reads; 750 written.
        expected = (
            1_100 * 3.75 + 1_100 * 0.3 + 700 * 3.75 + 50 * 15.0 + 1_100 * 0.3 + 750 * 3.75
        ) / 1e6
        assert (2_200, 2_550) == (metrics.cache_read_tokens, metrics.cache_write_tokens)
        assert expected == pytest.approx(metrics.usd, rel=1e-12)


class TestRequests:
    def test_tool_results_in_a_row_go_back_in_one_request(self) -> None:
        steps = (
            turn("user", 1100)
            + turn("assistant", 50)
            + turn("tool", 100)
            + turn("tool", 100)
            + turn("assistant", 50)
        )
        metrics = billed(steps, CLAUDE)
        # Two requests: after the user's turn (1,100 written), and after the second result
        # (1,350: 1,100 read, 250 written), answered by 50 each.
        expected = (1_100 * 3.75 + 50 * 15.0 + 1_100 * 0.3 + 250 * 3.75 + 50 * 15.0) / 1e6
        assert [1, 4] == [request.turn for request in metrics.requests]
        assert expected == pytest.approx(metrics.usd, rel=1e-12)

    def test_a_result_that_ends_the_run_is_sent(self) -> None:
        metrics = billed(turn("user", 1100) + turn("assistant", 50) + turn("tool", 100), CLAUDE)
        assert [1, 3] == [request.turn for request in metrics.requests]


class TestWarm:
    def test_a_warm_prefix_is_read_by_the_first_request(self) -> None:
        scenario = parse_scenario(
            '[compaction]\npolicy = "none"\nbudget = 9000\ntokenizer = "words"\n\n'
            + turn("user", 100),
            "test.toml",
        )
        session = Session(scenario.policies)
        tally = CostTally(CLAUDE, "5m", 2_000, warm=True)
        for command in scenario.steps:
            before = session.state
            events = session.execute(command)
            tally.step(command, events, before, session.state, len(session.run) - len(events))
        [request] = tally.metrics().requests
        # The 2,000 unseen tokens an earlier session cached are read; the turn is written.
        assert (0, 2_000, 100) == (
            request.bill.input,
            request.bill.cache_read,
            request.bill.cache_write,
        )
