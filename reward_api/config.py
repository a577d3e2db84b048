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
class Config:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 0  # grading processes; 0 = one per CPU core
    item_deadline_s: float = 10.0  # hard per-item deadline; a worker past it is killed and replaced
    worker_memory_mb: int = 4096  # address-space limit of each grading process
    max_batch_items: int = 4096  # more items in one request -> 413
    max_body_mb: float = 64.0  # larger request bodies -> 413
    default_profile: str = "accuracy"  # used when a request names none (OpenRLHF, slime, CLI)
    cache_entries: int = 100_000  # identical items answered from an LRU of this size; 0 disables it
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
