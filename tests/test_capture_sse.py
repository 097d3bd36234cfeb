"""Reading a text/event-stream body back into its events (memtape.capture.sse)."""

from memtape.capture.sse import ServerSentEvent, sse_events


class TestSseEvents:
    def test_named_events_and_data_are_read_in_order(self) -> None:
        body = b'event: ping\ndata: {"a": 1}\n\nevent: stop\ndata: {}\n\n'
        expected = [ServerSentEvent("ping", '{"a": 1}'), ServerSentEvent("stop", "{}")]
        assert expected == sse_events(body)

    def test_an_unnamed_event_is_a_message(self) -> None:
        assert [ServerSentEvent("message", "[DONE]")] == sse_events(b"data: [DONE]\n\n")

    def test_data_lines_join_with_newlines_across_line_endings(self) -> None:
        body = b"data: one\r\ndata: two\rdata:three\n\n"
        assert [ServerSentEvent("message", "one\ntwo\nthree")] == sse_events(body)

    def test_comments_and_other_fields_are_ignored(self) -> None:
        body = b": keep-alive\nid: 4\nretry: 10\ndata: x\n\n"
        assert [ServerSentEvent("message", "x")] == sse_events(body)

    def test_an_event_the_body_ends_inside_is_left_out(self) -> None:
        assert [ServerSentEvent("message", "a")] == sse_events(b"data: a\n\ndata: b\n")

    def test_a_line_separator_inside_data_does_not_split_it(self) -> None:
        body = "data: a\u2028b\x0bc\n\n".encode()
        assert [ServerSentEvent("message", "a\u2028b\x0bc")] == sse_events(body)
