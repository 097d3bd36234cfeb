"""memtape.core.chain: the hash chain over a run's events, and the signature of its head."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import hashlib
import hmac
from typing import Any

import pytest

from memtape.core.chain import (
    HEAD_HEX,
    LINK_HEX,
    Break,
    Chain,
    Signature,
    Verdict,
    canonical,
    link,
    seed,
    shown,
    sign,
    signing_key,
    verify,
)

HEADER: dict[str, Any] = {"memtape": "run", "format": 1, "scenario": "s", "events": 2, "steps": 1}

RECORDS: list[dict[str, Any]] = [
    {"at": 1, "step": 1, "type": "ClockAdvanced", "v": 1, "event": {"to": 1.0}, "command": {}},
    {"at": 2, "step": 1, "type": "ClockAdvanced", "v": 1, "event": {"to": 2.0}, "end": True},
]


Stored = list[tuple[dict[str, Any], Any]]


def _stored(header: dict[str, Any], records: list[dict[str, Any]]) -> tuple[dict[str, Any], Stored]:
    """The header with its head, and each record with the link it stores, as written."""
    chain = Chain.of(header)
    links = [chain.add(record) for record in records]
    return {**header, "chain": chain.head}, [(r, h) for r, h in zip(records, links, strict=True)]


class TestCanonical:
    def test_keys_are_sorted_and_spaces_dropped(self) -> None:
        assert b'{"a":[1,2.5],"b":"\xc3\xa9"}' == canonical({"b": "é", "a": (1, 2.5)})

    def test_an_integer_past_64_bits_cannot_be_hashed(self) -> None:
        with pytest.raises(TypeError):
            canonical({"n": 2**64})


class TestLinks:
    def test_the_seed_is_the_digest_of_the_tagged_header(self) -> None:
        expected = hashlib.sha256(
            b'memtape chain 1\n{"format":1,"memtape":"run","scenario":"s"}'
        ).digest()
        assert expected == seed(HEADER)

    @pytest.mark.parametrize("field", ["events", "steps", "chain", "signature"])
    def test_the_seed_leaves_out_the_counts_and_the_chain_s_own_fields(self, field: str) -> None:
        assert seed(HEADER) == seed({**HEADER, field: "anything"})

    def test_any_other_header_field_changes_the_seed(self) -> None:
        assert seed(HEADER) != seed({**HEADER, "scenario": "t"})

    def test_a_link_is_the_digest_of_the_previous_and_the_record(self) -> None:
        previous = b"\x01" * 32
        expected = hashlib.sha256(previous + canonical(RECORDS[0])).digest()
        assert expected == link(previous, RECORDS[0])

    def test_an_event_stores_128_bits_of_its_link(self) -> None:
        digest = bytes(range(32))
        assert (digest.hex()[:32], 32) == (shown(digest), LINK_HEX)

    def test_a_chain_s_head_is_its_last_whole_link(self) -> None:
        chain = Chain.of(HEADER)
        stored = [chain.add(record) for record in RECORDS]
        last = link(link(seed(HEADER), RECORDS[0]), RECORDS[1])
        assert (last.hex(), shown(last), HEAD_HEX) == (chain.head, stored[-1], len(chain.head))

    def test_an_empty_chain_s_head_is_the_seed(self) -> None:
        assert seed(HEADER).hex() == Chain.of(HEADER).head

    def test_a_chain_extended_from_a_head_goes_on_as_one_chain(self) -> None:
        whole = Chain.of(HEADER)
        for record in RECORDS:
            whole.add(record)
        first = Chain.of(HEADER)
        first.add(RECORDS[0])
        resumed = Chain(bytes.fromhex(first.head))
        resumed.add(RECORDS[1])
        assert whole.head == resumed.head


class TestSigning:
    def test_a_signature_is_the_hmac_of_the_head(self) -> None:
        head = "ab" * 32
        expected = hmac.new(b"k", head.encode(), hashlib.sha256).hexdigest()
        assert expected == sign(head, b"k")

    def test_no_key_no_signature(self) -> None:
        assert None is Chain.of(HEADER).signature(None)

    @pytest.mark.parametrize(("value", "key"), [("secret", b"secret"), ("", None), (None, None)])
    def test_the_key_comes_from_the_environment(
        self, monkeypatch: pytest.MonkeyPatch, value: str | None, key: bytes | None
    ) -> None:
        if value is None:
            monkeypatch.delenv("MEMTAPE_SIGNING_KEY", raising=False)
        else:
            monkeypatch.setenv("MEMTAPE_SIGNING_KEY", value)
        assert key == signing_key()

    def test_a_key_that_is_not_utf_8_is_its_own_bytes(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", b"\xff\xfekey".decode("utf-8", "surrogateescape"))
        assert b"\xff\xfekey" == signing_key()


class TestVerify:
    def test_a_chain_as_written_holds(self) -> None:
        header, records = _stored(HEADER, RECORDS)
        assert Verdict(True, None, Signature.NONE, 2) == verify(header, records, None)

    def test_a_changed_record_breaks_at_its_position(self) -> None:
        header, records = _stored(HEADER, RECORDS)
        records[1] = ({**records[1][0], "event": {"to": 3.0}}, records[1][1])
        verdict = verify(header, records, None)
        assert verdict.broken is not None
        assert (2, "position 2 breaks the chain") == (
            verdict.broken.position,
            verdict.broken.problem.split(":")[0],
        )

    def test_the_place_is_named_as_the_caller_says(self) -> None:
        header, records = _stored(HEADER, RECORDS)
        verdict = verify({**header, "scenario": "t"}, records, None, where=lambda p: f"line {p}")
        assert (
            Break(
                1,
                "line 1 breaks the chain: it, or the header, was changed after the run was written",
            )
            == verdict.broken
        )

    def test_a_command_cut_short_breaks_at_the_last_whole_one(self) -> None:
        """A torn tail does not excuse the head: the last whole command must end there."""
        header, records = _stored(HEADER, RECORDS)
        assert Break(0, "the chain head is not the header's own: the header was changed") == (
            verify(header, records[:1], None).broken
        )

    def test_commands_chained_on_after_the_head_break_where_they_begin(self) -> None:
        """The trial's forgery: whole commands chained on from the public head, then a torn
        tail, so that the run passes for one cut short."""
        header, records = _stored(HEADER, RECORDS)
        chain = Chain(bytes.fromhex(header["chain"]))
        forged = {**RECORDS[0], "at": 3, "step": 2, "end": True, "event": {"to": 9.0}}
        torn = {**RECORDS[0], "at": 4, "step": 3}
        records += [(forged, chain.add(forged)), (torn, chain.add(torn))]
        verdict = verify(header, records, None)
        problem = (
            "position 3 and the events after it come after the header's chain head (position 2 "
            "ends the run): they were added after the run was written, and are not part of it"
        )
        assert (Break(3, problem), 2) == (verdict.broken, verdict.covered)

    @pytest.mark.parametrize(("events", "vouched"), [(0, True), (1, True), (2, True), (3, False)])
    def test_a_verdict_vouches_for_the_events_up_to_its_head(
        self, events: int, vouched: bool
    ) -> None:
        header, records = _stored(HEADER, RECORDS)
        assert vouched == verify(header, records, None).vouches(events)

    def test_a_chain_broken_before_its_head_vouches_for_nothing(self) -> None:
        """Event 1 still links, but the chain from it never reaches the head."""
        header, records = _stored(HEADER, RECORDS)
        records[1] = ({**records[1][0], "event": {"to": 3.0}}, records[1][1])
        verdict = verify(header, records, None)
        assert (False, False) == (verdict.vouches(1), verdict.vouches(2))

    def test_no_head_and_no_links_is_unchained(self) -> None:
        records = [(record, None) for record in RECORDS]
        assert Verdict(False, None, Signature.NONE) == verify(HEADER, records, None)

    def test_a_record_that_cannot_be_hashed_is_a_break_not_an_error(self) -> None:
        header, records = _stored(HEADER, RECORDS)
        records[0] = ({**records[0][0], "big": 2**64}, records[0][1])
        verdict = verify(header, records, None)
        assert verdict.broken is not None
        assert verdict.broken.problem.startswith("position 1 cannot be hashed")

    @pytest.mark.parametrize(
        ("key", "expected"),
        [(b"k", Signature.VALID), (b"other", Signature.INVALID), (None, Signature.UNVERIFIED)],
    )
    def test_a_signed_head_verifies_under_its_key(
        self, key: bytes | None, expected: Signature
    ) -> None:
        header, records = _stored(HEADER, RECORDS)
        header["signature"] = sign(header["chain"], b"k")
        assert expected == verify(header, records, key).signature

    @pytest.mark.parametrize("signature", [5, "é" * 64, "ab"])
    def test_a_signature_that_is_not_one_does_not_match(self, signature: object) -> None:
        header, records = _stored(HEADER, RECORDS)
        header["signature"] = signature
        assert Signature.INVALID == verify(header, records, b"k").signature
