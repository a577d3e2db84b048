"""Service configuration: every setting, its default and its environment variable, in one place.

Each field reads `REWARD_API_<FIELD NAME IN UPPER CASE>` (e.g. `REWARD_API_WORKERS=4`);
command-line flags of `reward-api serve` override the environment. The defaults work
on any machine: workers sized to its cores, no auth, loopback only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from reward_api.profiles import resolve_profile


@dataclass(frozen=True)
class HttpSettings:
    """Where a service listens and how it holds hostile clients off (reward_api/http_guard.py); both services
    take these, the reward service as `REWARD_API_*`, the sandbox service as `SANDBOX_*`."""

    host: str = "127.0.0.1"
    port: int = 8000
    max_body_mb: float = 64.0  # larger request bodies -> 413
    # A body not fully received within this -> 408: 64 MB at 10 Mbit/s takes ~50 s; trainers on a LAN take < 1 s.
    body_timeout_s: float = 60.0
    # Work requests (POST) read or graded at once; beyond -> 503 + Retry-After. 64 trainer ranks x 4 batches each.
    max_requests_in_flight: int = 256
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


@dataclass(frozen=True)
class Config(HttpSettings):
    workers: int = 0  # grading processes; 0 = one per CPU core
    item_deadline_s: float = 10.0  # hard per-item deadline; a worker past it is killed and replaced
    queue_timeout_s: float = 120.0  # an item still waiting for a free worker this long after arriving: timeout
    worker_memory_mb: int = 4096  # address-space limit of each grading process
    max_batch_items: int = 4096  # more items in one request -> 413
    default_profile: str = "accuracy"  # used when a request names none (OpenRLHF, slime, CLI)
    cache_entries: int = 100_000  # identical items answered from an LRU of this size; 0 disables it
    cache_mb: float = 256.0  # ...and of at most this many MB of answers (a sort echo can be MBs)
    slow_after_s: float = 0.25  # an item past this much CPU steps aside: a fresh worker takes its place
    max_slow_calls: int = 0  # calls stepped aside at once (each holds a process); 0 = 4 per worker;
    # past it a slow item is cut at slow_after_s with status `timeout`, so normal items keep flowing
    heavy_workers: int = -1  # low-priority workers for items that look costly (integrals, long sums, ...)
    # from the start; -1 = one per worker, 0 = none (such items share the normal workers)
    sandbox_urls: str = ""  # sandbox service base URLs, comma-separated; empty = judge code in-process
    sandbox_auth_token: str = ""  # bearer token the sandbox service wants (its SANDBOX_AUTH_TOKEN)
    sandbox_isolation: str = "bwrap"  # in-process code isolation; `none` = insecure, for trusted code only
    code_deadline_s: float = 300.0  # most a code item may take: its own run budget plus a margin, up to this
    auth_token: str = ""  # when set, requests need `Authorization: Bearer <token>`
    log_level: str = "info"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> Config:
        """Defaults, then `REWARD_API_*` variables, then explicit overrides (CLI flags).

        An unknown `REWARD_API_*` variable or a default profile that does not resolve stops the
        start with a ValueError naming it: a misspelt setting would otherwise be silently ignored.
        """
        config = settings_from_env(cls, "REWARD_API_", environ, overrides, reject_unknown=True)
        config.check_default_profile()
        return config

    def check_default_profile(self) -> None:
        try:
            resolve_profile(self.default_profile)
        except ValueError as exc:
            raise ValueError(f"REWARD_API_DEFAULT_PROFILE={self.default_profile!r}: {exc}") from None

    def worker_count(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)


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
            values[f.name] = kind(raw)
        except ValueError as exc:
            raise ValueError(f"{prefix}{f.name.upper()}={raw!r} is not a valid {kind.__name__}") from exc
    return replace(cls(**values), **{k: v for k, v in overrides.items() if v is not None})
