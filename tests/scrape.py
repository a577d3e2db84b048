"""Read a running service's /metrics the way Prometheus does (tests of both services use it)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from reward_api.local import LocalServer


def metric(server: LocalServer, name: str, **labels: str) -> float:
    """The sum of the samples named `name` (e.g. `reward_requests_total`) whose labels include `labels`;
    0 when there are none."""
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )
