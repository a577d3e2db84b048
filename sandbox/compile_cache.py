"""Compiled programs kept across runs, so identical programs (the samples of one prompt, a batch sent again)
compile once.

An entry is keyed by everything a compile depends on: the language, the files, the compile command, the limits
it ran under and the toolchain (its compiler's and needed files' identity on disk: an upgrade is a new key). It
holds the compile step's result and, for a program that compiled, what compiling wrote beside the source (a
binary, class files), packed by the runner inside the sandbox; the next run unpacks them into its own sandbox and
skips the compile. A compile error is kept too (the same source fails the same way); a compile cut off by a limit
or killed is not, since under load it might have finished.

Runs of the same program wait for the one compiling it (a lock per key, across the processes sharing the
directory) at most as long as that compile may take, then compile themselves. The directory is bounded by
`max_bytes`: the least recently used entries go first. It must belong to this user and be writable by no one
else: an entry planted there would run as the program's build. A directory that cannot be written (a read-only
mount, a full disk) costs compiles, never a run: programs compile every time, and the service says so once.

    SANDBOX_COMPILE_CACHE_MB   the bound, default 256; 0 turns the cache off
    SANDBOX_COMPILE_CACHE_DIR  default <temporary directory>/reward-sandbox-compile-<uid>
"""

from __future__ import annotations

import binascii
import contextlib
import fcntl
import hashlib
import json
import logging
import marshal
import os
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.languages import Language

log = logging.getLogger(__name__)
DEFAULT_MB = 256
_FORMAT = 1  # of an entry's file: a new layout is a new key
_LOCK_POLL_S = 0.02
_NOT_MEGABYTES = "SANDBOX_COMPILE_CACHE_MB must be a whole number of megabytes (0: no compile cache), not {}"
_EVICT_TO = 0.8  # past the bound, entries go until the rest fit in this share of it
_MAX_ENTRY_BYTES = 16 * 1024 * 1024  # Go's binaries ~2 MB, go test's with testify ~6 MB, GHC's and rustc's ~4 MB
_NEAR_LIMIT = 0.9  # a compile that used this share of its CPU limit may not finish next time


@dataclass(frozen=True)
class Compiled:
    """A compile step's result as the runner reported it, and the files it wrote (None: it failed)."""

    result: dict[str, Any]
    artifacts: dict[str, tuple[int, bytes]] | None  # relative path -> (mode, content)

    @property
    def ok(self) -> bool:
        return self.artifacts is not None


class CompileCache:
    def __init__(self, directory: str | Path, max_bytes: int) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        # One program's output may take a quarter of the cache, at most _MAX_ENTRY_BYTES (it comes back through
        # the runner's pipe as base64 in JSON: the host holds it a few times over while keeping it); a larger one
        # is simply compiled every time.
        self.max_entry_bytes = min(max_bytes // 4, _MAX_ENTRY_BYTES)
        self._unwritable_said = False
        _make_private_directory(self.directory)

    @classmethod
    def configured(cls, megabytes: int, directory: str = "") -> CompileCache | None:
        """The cache of `megabytes` (0: None, off) in `directory` (empty: the default)."""
        if megabytes < 0:
            raise ValueError(_NOT_MEGABYTES.format(megabytes))
        return cls(directory or _default_directory(), megabytes * 1024 * 1024) if megabytes else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> CompileCache | None:
        """The cache SANDBOX_COMPILE_CACHE_MB and SANDBOX_COMPILE_CACHE_DIR configure."""
        text = environ.get("SANDBOX_COMPILE_CACHE_MB", str(DEFAULT_MB))
        try:
            megabytes = int(text)
        except ValueError:
            raise ValueError(_NOT_MEGABYTES.format(repr(text))) from None
        return cls.configured(megabytes, environ.get("SANDBOX_COMPILE_CACHE_DIR", ""))

    @staticmethod
    def key(lang: Language, job: Mapping[str, Any], disk_mb: int, processes: int) -> str:
        """What a compile of `job` (sandbox/executor.py's) depends on, hashed (as JSON: marshal's bytes for equal
        values differ with their objects' reference counts)."""
        toolchain = [_identity(path) for path in (job["compile"][0], *lang.needs)]
        parts = (_FORMAT, lang.name, lang.env, toolchain, job["files"], job["compile"], job["compile_limits"])
        return hashlib.sha256(json.dumps([*parts, disk_mb, processes], sort_keys=True).encode()).hexdigest()

    @contextlib.contextmanager
    def claim(self, key: str, cpu_limit_s: float) -> Iterator[Claim]:
        """The entry for `key`, or the right to make it: waits for another run compiling the same program as
        long as that compile may take (twice its CPU limit `cpu_limit_s`, its wall limit). The claim ends at
        `Claim.store` or on leaving the block, whichever comes first."""
        claim = Claim(self, key, cpu_limit_s)
        try:
            claim.acquire(wait_s=2 * cpu_limit_s)
            yield claim
        finally:
            claim.release()

    def entry_path(self, key: str) -> Path:
        return self.directory / f"{key}.bin"

    def load(self, key: str) -> Compiled | None:
        path = self.entry_path(key)
        try:
            stored = marshal.loads(path.read_bytes())
            found = Compiled(result=stored["result"], artifacts=stored["artifacts"])
        except FileNotFoundError:
            return None
        except (OSError, EOFError, ValueError, TypeError, KeyError):  # a torn or foreign file: compile again
            path.unlink(missing_ok=True)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        return found

    def save(self, key: str, compiled: Compiled) -> None:
        data = marshal.dumps({"result": compiled.result, "artifacts": compiled.artifacts})
        try:
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".part")
        except OSError as error:
            self.unwritable(error)
            return
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, self.entry_path(key))  # whole or not at all for concurrent readers
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            self.unwritable(error)
            return
        self.evict()

    def unwritable(self, error: OSError) -> None:
        """Writing the directory failed: the program compiles next time too. Said once, not per run."""
        if not self._unwritable_said:
            self._unwritable_said = True
            log.warning(
                "the compile cache directory %s cannot be written (%s): programs compile every time; give "
                "SANDBOX_COMPILE_CACHE_DIR a writable directory, or SANDBOX_COMPILE_CACHE_MB=0 to turn the cache off",
                self.directory,
                error.strerror or error,
            )

    def evict(self) -> None:
        """Least recently used entries removed until what is left fits the bound."""
        entries = []
        for path in self.directory.glob("*.bin"):
            with contextlib.suppress(OSError):
                info = path.stat()
                entries.append((info.st_mtime, info.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries):
            if total <= self.max_bytes * _EVICT_TO:
                break
            path.unlink(missing_ok=True)
            total -= size


class Claim:
    """One run's hold on a key: what is stored under it (`found`), else the lock that makes its compile the one."""

    def __init__(self, cache: CompileCache, key: str, cpu_limit_s: float) -> None:
        self.cache, self.key, self.cpu_limit_s = cache, key, cpu_limit_s
        self.found: Compiled | None = None
        self._lock: int | None = None

    def acquire(self, wait_s: float) -> None:
        self.found = self.cache.load(self.key)
        if self.found is not None:
            return
        try:
            lock = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:  # read-only: no lock to share, and nothing will be kept
            self.cache.unwritable(error)
            return
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._lock = lock
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:  # the other compile is slow or stuck: compile anyway
                    os.close(lock)
                    return
                time.sleep(_LOCK_POLL_S)
        self.found = self.cache.load(self.key)  # what the run we waited for stored

    def store(self, result: dict[str, Any]) -> None:
        """Keeps the runner's compile message (its `artifacts` base64, sandbox/runner.py) when another run would
        get the same; then lets runs waiting for it go on."""
        try:
            if (compiled := _cacheable(result, self.cpu_limit_s)) is not None:
                self.cache.save(self.key, compiled)
        finally:
            self.release()

    def release(self) -> None:
        if self._lock is not None:
            # Runs still waiting hold the removed file and find the entry; later ones find it without a lock.
            self._lock_path.unlink(missing_ok=True)
            os.close(self._lock)  # closing drops the flock
            self._lock = None

    @property
    def _lock_path(self) -> Path:
        return self.cache.directory / f"{self.key}.lock"


def _cacheable(result: dict[str, Any], cpu_limit_s: float) -> Compiled | None:
    """The entry a compile message makes: a program that compiled (its files all packed) or one that failed to;
    None for a compile cut off by a limit or a signal, whose outcome may differ next time (g++ reports its
    compiler's CPU limit as an internal error, exit code 4: its CPU time tells)."""
    if result.get("status") != "exited" or result.get("cpu_s", 0.0) >= _NEAR_LIMIT * cpu_limit_s:
        return None
    compiled = unpacked(result)
    if compiled.ok or result.get("exit_code") != 0:
        return compiled
    return None  # over max_entry_bytes, or not plain files


def unpacked(result: dict[str, Any]) -> Compiled:
    """A compile message as the runner sent it (its `artifacts` base64): the files it wrote when it succeeded and
    they were all packed, else none."""
    summary = {name: value for name, value in result.items() if name != "artifacts"}
    packed = result.get("artifacts")
    if result.get("status") != "exited" or result.get("exit_code") != 0 or packed is None:
        return Compiled(summary, None)
    artifacts = {path: (mode, binascii.a2b_base64(content)) for path, (mode, content) in packed.items()}
    return Compiled(summary, artifacts)


def _identity(path: str) -> tuple[str, int, int, int]:
    """A file as it is on disk now (its real path, inode, size, modification time): another after an upgrade."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return (real, 0, 0, 0)
    return (real, info.st_ino, info.st_size, info.st_mtime_ns)


def _make_private_directory(directory: Path) -> None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ValueError(
            f"the compile cache directory {directory} must be a directory of this user (uid {os.getuid()}) that no "
            "one else can write: set SANDBOX_COMPILE_CACHE_DIR to one, or SANDBOX_COMPILE_CACHE_MB=0 to turn it off"
        )


def _default_directory() -> str:
    return os.path.join(tempfile.gettempdir(), f"reward-sandbox-compile-{os.getuid()}")
