"""The one-line form of error messages."""

from memtape.core.errors import one_line


def test_line_breaks_in_a_message_are_escaped() -> None:
    """A message quoting user data with line breaks still prints as one line."""
    assert "turn 'a\\nb\\r' is bad" == one_line("turn 'a\nb\r' is bad")
    assert 1 == len(one_line("x\ny\rz").splitlines())
