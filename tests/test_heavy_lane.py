"""Items that look costly are decided under load (issue 20).

`grading.looks_costly` sends a long `\\sum` or a 3-digit power to the pool's heavy lane. Its workers ran at
the lowest CPU priority from the start, so while cheap items kept the normal workers busy a heavy item got
no CPU at all until its deadline: `\\frac{x^{1000}-1}{x-1}` against `\\sum_{k=0}^{999} x^k`, decided in
milliseconds alone, answered `timeout` in every run of bench/math_hard_throughput.py. Here a service with
2 workers and a 2 s deadline is flooded with distinct cheap items (no cache) for longer than that deadline
while the heavy items are graded: each must be decided, right ones 1 and their wrong twins 0.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest

from reward_api.local import LocalServer

DEADLINE_S = 2.0
FLOOD_SENDERS = 3  # requests of cheap items in flight at once: the normal workers never wait for one
FLOOD_BATCH = 64

# (answer, reference, expected accuracy): issue 20's pair both ways, and wrong twins
HEAVY = [
    ("\\frac{x^{1000}-1}{x-1}", "\\sum_{k=0}^{999} x^k", 1),
    ("\\sum_{k=0}^{999} x^k", "\\frac{x^{1000}-1}{x-1}", 1),
    ("\\frac{x^{1000}-1}{x-1}", "\\sum_{k=0}^{998} x^k", 0),
    ("\\sum_{k=0}^{998} x^k", "\\frac{x^{1000}-1}{x-1}", 0),
    ("\\frac{x^{1000}-1}{x+1}", "\\sum_{k=0}^{999} x^k", 0),
]


def item(answer: str, reference: str) -> dict:
    return {"task": "math", "completion": f"The answer is $\\boxed{{{answer}}}$.", "reference": reference}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    settings = {"REWARD_API_WORKERS": "2", "REWARD_API_ITEM_DEADLINE_S": str(DEADLINE_S)}
    with LocalServer(tmp_path_factory.mktemp("heavy"), REWARD_API_CACHE_ENTRIES="0", **settings) as srv:
        yield srv


class Flood:
    """Batches of distinct cheap items (each a few ms of sympy) sent without pause until stopped; every one
    must be graded right too."""

    def __init__(self, server: LocalServer) -> None:
        self.server = server
        self.stopped = threading.Event()
        self.numbers = itertools.count(1)
        self.wrong: list[dict] = []
        self.batches = 0
        self.threads = [threading.Thread(target=self.send) for _ in range(FLOOD_SENDERS)]

    def send(self) -> None:
        with self.server.client() as client:
            while not self.stopped.is_set():
                numbers = [next(self.numbers) for _ in range(FLOOD_BATCH)]
                items = [item(f"\\frac{{{n}x + {n}}}{{x+1}}", str(n)) for n in numbers]
                response = client.post("/v1/rewards", json={"items": items})
                if response.status_code != 200:
                    self.wrong.append({"http": response.status_code, "body": response.text})
                    continue
                self.wrong += [r for r in response.json()["results"] if (r["status"], r["reward"]) != ("ok", 1.0)]
                self.batches += 1

    def __enter__(self) -> Flood:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        for thread in self.threads:
            thread.join()


def test_items_that_look_costly_are_decided_while_cheap_items_keep_the_workers_busy(server: LocalServer) -> None:
    with server.client() as client, Flood(server) as flood:
        while flood.batches < FLOOD_SENDERS:  # the flood is under way: its first batches are answered
            time.sleep(0.05)
        response = client.post("/v1/rewards", json={"items": [item(a, r) for a, r, _ in HEAVY]})
        batches_meanwhile = flood.batches
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [(r["status"], r["components"].get("accuracy")) for r in results] == [("ok", e) for _, _, e in HEAVY], [
        r["details"] for r in results
    ]
    assert flood.wrong == [] and flood.batches > batches_meanwhile  # the flood went on past the heavy items
