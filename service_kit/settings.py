"""Settings both services share: where they listen and how they hold hostile clients off.

Each service's config is a frozen dataclass that extends `HttpSettings` and reads its fields from
`<PREFIX><FIELD>` environment variables (`settings_from_env`): `REWARD_API_*` for the reward service,
`SANDBOX_*` for the sandbox service.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar


@dataclass(frozen=True)
class HttpSettings:
    """Where a service listens and how it holds hostile clients off (service_kit/http_guard.py); both services
    take these, the reward service as `REWARD_API_*`, the sandbox service as `SANDBOX_*`."""

    host: str = "127.0.0.1"
    port: int = 8000
    max_body_mb: float = 64.0  # larger request bodies -> 413
    # A body not fully received within this -> 408: 64 MB at 10 Mbit/s takes ~50 s; trainers on a LAN take < 1 s.
    body_timeout_s: float = 60.0
    # ...and after its first 5 s it must keep arriving at this rate (MB/s), else 408: a client that trickles a
    # large declared body cannot hold its share of max_body_mb_in_flight for the whole body_timeout_s.
    min_body_mb_per_s: float = 0.5
    # Work requests (POST) read or graded at once; beyond -> 503 + Retry-After. 64 trainer ranks x 4 batches each.
    max_requests_in_flight: int = 256
    # A request beyond that cap waits this long for a slot before its 503: a burst of per-sample requests
    # (slime's --rm-url does not retry) queues for the moments each takes instead of being refused.
    admission_wait_s: float = 10.0
    # Their bodies together, counted by Content-Length before a byte is read; beyond -> 503 + Retry-After.
    # Two of the largest bodies; a parsed body costs ~4x its size in memory, so this bounds ~0.5 GB.
    max_body_mb_in_flight: float = 128.0
    # A connection whose request headers are not complete this long after its first byte is closed (slowloris);
    # real clients send headers (< 8 KB) in one packet.
    header_timeout_s: float = 10.0
    # Idle keep-alive connections close after this: longer than httpx's 5 s pool expiry, so clients close first.
    keep_alive_s: float = 20.0
    # Open connections at once (uvicorn's limit_concurrency: requests beyond -> 503); one file descriptor each,
    # capped below the open-files limit, which the service raises to its hard limit at start.
    max_connections: int = 1024
    # On SIGTERM (a rollout, a scale-down) requests in progress get this long to finish before they are cut:
    # above the longest batch or sandbox run. Keep the orchestrator's grace period (Kubernetes
    # terminationGracePeriodSeconds, compose stop_grace_period) a few seconds above it.
    drain_s: float = 60.0
    # When set, work requests (anything but GET/HEAD) need `Authorization: Bearer <token>` (the scheme in any case,
    # RFC 9110), checked from the headers before a byte of the body is read or counted: 401 otherwise.
    auth_token: str = ""


T = TypeVar("T")


def settings_from_env(
    cls: type[T], prefix: str, environ: dict[str, str] | None, overrides: dict[str, Any], reject_unknown: bool = False
) -> T:
    """A frozen settings dataclass from its defaults, then `<prefix><FIELD>` variables, then overrides.

    With `reject_unknown`, a `<prefix>*` variable that names no field is a ValueError (a typo).
    """
    environ = os.environ if environ is None else environ
    if reject_unknown:
        known = {f"{prefix}{f.name.upper()}" for f in fields(cls)}
        unknown = sorted(name for name in environ if name.startswith(prefix) and name not in known)
        if unknown:
            raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    values: dict[str, Any] = {}
    for f in fields(cls):
        raw = environ.get(f"{prefix}{f.name.upper()}")
        if raw is None:
            continue
        kind = type(getattr(cls, f.name))
        try:
            values[f.name] = _parse_bool(raw) if kind is bool else kind(raw)
        except ValueError as exc:
            raise ValueError(f"{prefix}{f.name.upper()}={raw!r} is not a valid {kind.__name__}") from exc
    return replace(cls(**values), **{k: v for k, v in overrides.items() if v is not None})


def _parse_bool(raw: str) -> bool:
    """`bool("false")` is True: read the words people write instead."""
    word = raw.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected true or false, got {raw!r}")
