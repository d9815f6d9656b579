"""Counts in grammatical English, for messages, captions and pages ('1 seed', '3 seeds').

Not for the modules a training job imports (train/, methods/, settings): a rule's code digest covers every
pipelib module its script imports, so a wording change there re-runs every training job."""

from __future__ import annotations

IRREGULAR = {"does not hold": "do not hold", "holds": "hold"}  # the claim verdicts' verbs


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and ``noun`` in the number ``n`` takes: plural(1, 'seed') = '1 seed', plural(2, 'seed') = '2 seeds',
    plural(0, 'core') = '0 cores'; ``many`` where the plural is not noun + s (plural(2, 'party', 'parties'))."""
    if n == 1:
        return f"{n:,} {noun}"
    return f"{n:,} {many or IRREGULAR.get(noun) or noun + 's'}"
