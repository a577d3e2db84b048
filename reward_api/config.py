"""Service configuration: every setting, its default and its environment variable, in one place.

Each field reads `REWARD_API_<FIELD NAME IN UPPER CASE>` (e.g. `REWARD_API_WORKERS=4`);
command-line flags of `reward-api serve` override the environment. The defaults work
on any machine: workers sized to its cores, no auth, loopback only. The HTTP settings
(host, port, body and connection limits) are `HttpSettings` of service_kit/settings.py,
shared with the sandbox service.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from reward_api.profiles import resolve_profile
from service_kit.settings import HttpSettings, settings_from_env


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
    # A Redis shared by replicas, behind each process's LRU (e.g. redis://redis:6379/0); empty = none.
    # A Redis that fails or answers slowly is a cache miss, never a grading failure.
    cache_redis_url: str = ""
    # ...bounded to this many MB: its whole maxmemory (Redis itself takes ~1 MB), set with LRU eviction on
    # connect; a server that refuses CONFIG SET must already have a maxmemory and an evicting policy
    cache_redis_mb: float = 256.0
    cache_redis_ttl_s: int = 7 * 24 * 3600  # ...and each answer kept there at most this long
    slow_after_s: float = 0.25  # an item past this much CPU steps aside: a fresh worker takes its place
    max_slow_calls: int = 0  # calls stepped aside at once (each holds a process); 0 = 4 per worker;
    # past it a slow item is cut at slow_after_s with status `timeout`, so normal items keep flowing
    heavy_workers: int = -1  # workers for items that look costly (integrals, long sums, ...), lowered once slow
    # from the start; -1 = one per worker, 0 = none (such items share the normal workers)
    # workers for code items, which mostly wait for their sandboxed programs: a program spinning to its time
    # limit never holds a worker normal items need; -1 = one per worker, 0 = none (code shares the normal workers)
    code_workers: int = -1
    # code items each code worker grades at once, each in a thread waiting for its programs (which may each
    # use up to their memory limit); past the slots they queue
    code_calls: int = 32
    sandbox_urls: str = ""  # sandbox service base URLs, comma-separated; empty = judge code in-process
    sandbox_auth_token: str = ""  # bearer token the sandbox service wants (its SANDBOX_AUTH_TOKEN)
    # In-process code isolation (README "Isolation levels"): `bwrap` (namespaces + cgroup bounds), `bwrap-rlimits`
    # (namespaces + cgroups where writable, else per-process rlimits: weaker), `none` (insecure, trusted code only)
    sandbox_isolation: str = "bwrap"
    # Refuse to start when code cannot be graded at that level; false = start anyway, answer code items `error`
    require_code: bool = False
    code_deadline_s: float = 300.0  # most a code item may take: its own run budget plus a margin, up to this
    # An item with `group_size` waits for the rest of its group (reward_api/groups.py) at most this long after the
    # group's first sample arrived, then the group is answered over the samples that came (`partial`). Under the
    # HTTP timeouts of the trainers' own clients (slime 120 s, OpenRLHF 180 s); a request may ask for less
    # (`group_wait_s`), which our client does from its own timeout
    group_wait_s: float = 90.0
    # Servers a profile's math.verifier may name, comma-separated: a base URL (http://verifier:8000), or an
    # origin without a port for every port of that host (http://127.0.0.1); empty = no verifier model.
    # A request's profile must not make the service POST to any address it likes.
    math_verifier_urls: str = ""
    log_level: str = "info"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> Config:
        """Defaults, then `REWARD_API_*` variables, then explicit overrides (CLI flags).

        An unknown `REWARD_API_*` variable or a default profile that does not resolve stops the
        start with a ValueError naming it: a misspelt setting would otherwise be silently ignored.
        """
        config = settings_from_env(cls, "REWARD_API_", environ, overrides, reject_unknown=True)
        config.check_default_profile()
        config.check_verifier_urls()
        return config

    def check_default_profile(self) -> None:
        try:
            resolve_profile(self.default_profile)
        except ValueError as exc:
            raise ValueError(f"REWARD_API_DEFAULT_PROFILE={self.default_profile!r}: {exc}") from None

    def check_verifier_urls(self) -> None:
        for entry in filter(None, (entry.strip() for entry in self.math_verifier_urls.split(","))):
            try:
                url = httpx.URL(entry)
            except httpx.InvalidURL as exc:
                raise ValueError(f"REWARD_API_MATH_VERIFIER_URLS: {entry!r} is not a URL ({exc})") from None
            if url.scheme not in ("http", "https") or not url.host or url.userinfo or url.query or url.fragment:
                raise ValueError(
                    f"REWARD_API_MATH_VERIFIER_URLS: {entry!r} must be http(s)://host[:port][/path], "
                    "without user info, query or fragment"
                )

    def allows_verifier(self, base_url: str) -> bool:
        """Is `base_url` one of math_verifier_urls (or below its path), or on a host listed there without a port?

        Compared as parsed URLs (scheme, host, port, path), as httpx will send them: a prefix of the text is
        no match (`http://listed:1@elsewhere` names elsewhere), and a URL with user info, a query or a
        fragment is never allowed.
        """
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, TypeError):
            return False
        if url.userinfo or url.query or url.fragment or not url.host:
            return False
        return any(_names_verifier(entry.strip(), url) for entry in self.math_verifier_urls.split(","))

    def worker_count(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)


def _names_verifier(allowed: str, url: httpx.URL) -> bool:
    """Does the operator's entry `allowed` cover `url`: same scheme and host, the same port unless the entry
    names none, and a path at or below the entry's?"""
    if not allowed:
        return False
    entry = httpx.URL(allowed)
    if (url.scheme, url.host) != (entry.scheme, entry.host):
        return False
    if urlsplit(allowed).port is not None and _port(url) != _port(entry):
        return False
    base, path = entry.path.rstrip("/"), url.path.rstrip("/")
    return path == base or path.startswith(base + "/")


def _port(url: httpx.URL) -> int | None:
    """The port httpx connects to (it leaves a scheme's default port out of `url.port`)."""
    return url.port or {"http": 80, "https": 443}.get(url.scheme)
