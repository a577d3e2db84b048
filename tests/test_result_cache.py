"""The result cache's byte bound is what the process holds for it (its resident memory), under churn too."""

from __future__ import annotations

import gc
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import httpx

from reward_api.cache import LRUCache, digest
from reward_api.graders.base import Score
from reward_api.grading import TextGrades
from reward_api.local import LocalServer
from tests.scrape import metric


def grades(i: int) -> TextGrades:
    """Answers of the sizes a service keeps: a math verdict with its echoed answer, a format score, and now
    and then a long echo (a sort item's)."""
    echo = "x" * (2000 if i % 50 == 0 else 10 + i % 40)
    return TextGrades(
        "ok",
        {
            "accuracy": Score(float(i % 2), {"method": "symbolic", "answer": f"{i}/7", "reference": echo}),
            "format": Score(1.0, {"mode": "think", "issues": []}),
        },
    )


def resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def fill(max_bytes: int, count: int) -> dict[str, int]:
    """Put `count` answers in a cache of `max_bytes`: its count and what the process's resident memory grew by."""
    lru: LRUCache[TextGrades] = LRUCache(max_entries=10_000_000, max_bytes=max_bytes)
    gc.collect()
    before = resident_bytes()
    for i in range(count):
        lru.put(digest(str(i)), grades(i))
    gc.collect()
    last = [lru.get(digest(str(i))) == grades(i) for i in range(count - 10, count)]
    return {"bytes": lru.bytes, "held": resident_bytes() - before, "entries": len(lru), "last_kept": all(last)}


def fill_in_fresh_process(max_bytes: int, count: int) -> dict[str, int]:
    """`fill` in an interpreter of its own: one that has freed memory before (pytest's, after other tests)
    takes the cache's allocations from what it already holds, and its resident memory hardly grows."""
    code = f"import json; from tests.test_result_cache import fill; print(json.dumps(fill({max_bytes}, {count})))"
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_counted_bytes_are_what_the_process_holds() -> None:
    filled = fill_in_fresh_process(256 << 20, 60_000)
    assert filled["entries"] == 60_000  # not full: nothing evicted
    assert 0.75 <= filled["bytes"] / filled["held"] <= 1.3, filled


def test_under_churn_the_process_holds_no_more_than_the_bound() -> None:
    """Answers of every size evicted and written for four times the bound: the process holds the bound (the
    per-entry objects of an LRU of pickles fragmented the heap and kept growing)."""
    max_bytes = 24 << 20
    filled = fill_in_fresh_process(max_bytes, 200_000)
    assert 0.9 * max_bytes <= filled["bytes"] <= max_bytes, filled
    assert filled["entries"] < 200_000  # evicted
    assert filled["held"] <= 1.3 * max_bytes, filled
    assert filled["last_kept"]


def test_a_hit_is_an_equal_copy_and_the_oldest_goes_first() -> None:
    lru: LRUCache[TextGrades] = LRUCache(max_entries=2, max_bytes=1 << 20)
    lru.put(b"a", grades(1))
    lru.put(b"b", grades(2))
    hit = lru.get(b"a")
    assert hit == grades(1)
    hit.scores["accuracy"].details["answer"] = "changed by a reader"
    assert lru.get(b"a") == grades(1)  # what a reader does to its answer is not what the next one gets
    lru.put(b"c", grades(3))  # evicts b: a was used after it
    assert (lru.get(b"a"), lru.get(b"b"), lru.get(b"c")) == (grades(1), None, grades(3))


def test_a_pickle_given_with_an_answer_is_kept_as_it_is() -> None:
    """A worker's answer comes pickled: those bytes are what the log holds (counted as they are), not a re-pickle."""
    given = pickle.dumps(grades(1), protocol=0)  # longer than the cache's own pickle: its length shows which is kept
    own: LRUCache[TextGrades] = LRUCache(max_entries=10, max_bytes=1 << 20)
    as_given: LRUCache[TextGrades] = LRUCache(max_entries=10, max_bytes=1 << 20)
    own.put(b"a", grades(1))
    as_given.put(b"a", grades(1), given)
    assert as_given.bytes - own.bytes == len(given) - len(pickle.dumps(grades(1), pickle.HIGHEST_PROTOCOL))
    assert as_given.get(b"a") == grades(1)


def test_one_answer_over_half_the_bound_is_not_kept() -> None:
    lru: LRUCache[TextGrades] = LRUCache(max_entries=10, max_bytes=2000)
    empty = lru.bytes  # the index's own table
    lru.put(b"big", grades(0))  # its 2,000-character echo
    assert (len(lru), lru.bytes) == (0, empty)
    lru.put(b"small", grades(1))
    assert len(lru) == 1


def test_metrics_show_resident_memory_beside_the_cache(server: LocalServer) -> None:
    item = {"completion": "\\boxed{41}", "reference": "41", "task": "math"}
    httpx.post(f"{server.url}/v1/rewards", json={"items": [item]}, timeout=60).raise_for_status()
    assert metric(server, "reward_cache_bytes") > 0
    assert metric(server, "reward_cache_entries") >= 1
    assert metric(server, "process_resident_memory_bytes") > 50 * 2**20  # a Python service with FastAPI loaded
