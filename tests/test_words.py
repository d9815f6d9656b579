"""pipelib.words: the one pluralising rule of messages, captions and pages."""

from pipelib.words import plural


def test_plural_agrees_with_its_count():
    assert plural(1, "seed") == "1 seed" and plural(3, "seed") == "3 seeds" and plural(0, "core") == "0 cores"
    assert plural(2, "party", "parties") == "2 parties" and plural(1, "party", "parties") == "1 party"
    assert plural(1, "pre-training epoch") == "1 pre-training epoch"
    assert plural(12000, "query", "queries") == "12,000 queries"
