"""Prometheus metrics of one service process, in a registry of its own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "reward_requests", "HTTP requests by endpoint and status code", ["endpoint", "code"], registry=r
        )
        self.request_seconds = Histogram(
            "reward_request_seconds", "HTTP request latency", ["endpoint"], buckets=_LATENCY_BUCKETS, registry=r
        )
        self.items = Counter("reward_items", "Graded items by task and status", ["task", "status"], registry=r)
        self.group_items = Counter(
            "reward_group_items",
            "Items of groups a group component (kimi_length) was computed over, by how the group was formed: complete "
            "(all group_size samples), partial (a wait bound came first: over the samples that came), late (after "
            "its group was answered), request (group_size not given: the request's)",
            ["outcome"],
            registry=r,
        )
        self.group_relayed = Counter(
            "reward_group_relayed",
            "Samples of groups split between replicas (shared through Redis): sent to the group's owner replica "
            "(sent), or joined here for another replica (served)",
            ["direction"],
            registry=r,
        )
        self.group_relay_errors = Counter(
            "reward_group_relay_errors",
            "Groups shared through Redis: what failed (claim, publish, listen, take_over, decode; no_answer: an owner "
            "replica did not answer within the sample's bound; owner_gone: an owner replica no longer listened and "
            "was replaced)",
            ["op"],
            registry=r,
        )
        self.groups_waiting = Gauge("reward_groups_waiting", "Groups waiting for their other samples", registry=r)
        self.grading_seconds = Histogram(
            "reward_item_grading_seconds",
            "Time an item spent in a grading worker",
            ["task"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.worker_restarts = Counter(
            "reward_worker_restarts", "Grading workers killed and replaced, by reason", ["reason"], registry=r
        )
        self.cache_hits = Counter("reward_cache_hits", "Items answered from the cache", registry=r)
        self.cache_misses = Counter("reward_cache_misses", "Items not found in the cache", registry=r)
        self.cache_shared_hits = Counter(
            "reward_cache_shared_hits",
            "Items answered from the shared (Redis) cache, also in reward_cache_hits",
            registry=r,
        )
        self.cache_errors = Counter(
            "reward_cache_errors",
            "Shared (Redis) cache operations that failed or timed out, each a miss: get, put, connect; "
            "encode/decode: an answer that does not round-trip as JSON",
            ["op"],
            registry=r,
        )
        self.math_verifier = Counter(
            "reward_math_verifier_items",
            "Math items the rules rejected that a verifier model (profile math.verifier) judged, by outcome: "
            "equal, not_equal, undecided, error (no verdict: unreachable, too slow, refused; the rules' "
            "verdict stands)",
            ["outcome"],
            registry=r,
        )
        self.workers = Gauge("reward_workers", "Grading worker processes configured", registry=r)
        self.code_grading = Gauge(
            "reward_code_grading_available",
            "1 when code items can be graded, by isolation level (bwrap+cgroup2, bwrap+cgroup1, bwrap+rlimits, none, "
            "sandbox-service); 0 with isolation=unavailable: code items are answered `error` (/readyz says why)",
            ["isolation"],
            registry=r,
        )
        self.slow_calls = Gauge(
            "reward_slow_calls", "Calls past slow_after_s, running aside the pool at low priority", registry=r
        )
        self.cache_bytes = Gauge(
            "reward_cache_bytes",
            "Bytes the result cache holds (pickled answers, keys, slots); process_resident_memory_bytes beside it",
            registry=r,
        )
        # process_resident_memory_bytes, process_cpu_seconds_total, open fds: what the process really holds.
        ProcessCollector(registry=r)
        self.cache_entries = Gauge("reward_cache_entries", "Answers held by the result cache", registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
