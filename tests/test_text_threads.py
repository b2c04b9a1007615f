"""Stemming runs inside per-question batches that Prefect's thread pool runs in parallel."""

from __future__ import annotations

import random
import threading

from stages.common import text


def test_stemming_in_parallel_threads_matches_stemming_alone():
    rng = random.Random(7)
    words = [
        "".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(3, 14))) + suffix
        for suffix in ("ings", "ational", "ness", "ed", "ly")
        for _ in range(20_000)
    ]
    expected = [text.stem.__wrapped__(w) for w in words]  # uncached, one thread
    results: dict[int, list[str]] = {}
    errors: list[str] = []

    def work(part: int) -> None:
        try:
            results[part] = [text.stem.__wrapped__(w) for w in words[part::4]]
        except Exception as exc:  # the shared-stemmer race surfaced as IndexError
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(part,)) for part in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for part in range(4):
        assert results[part] == expected[part::4]
