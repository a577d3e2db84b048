"""Files a run is given before it starts and files it gives back after (SandboxFusion's `files` and `fetch_files`).

A path is relative to the program's working directory (/sandbox/src in the sandbox) or absolute inside the
sandbox: under /sandbox, or under /tmp where the run is isolated (without isolation /tmp is the host's). Anything
else, `..` climbing out of those included, is refused with the reason before the run starts. The runner writes
and reads the files inside the sandbox, as the program's user: nothing outside the sandbox's own mounts is
reachable, whatever a path or a symlink the program made says.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from collections.abc import Mapping, Sequence

SANDBOX_ROOT = "/sandbox"
WORKING_DIRECTORY = "/sandbox/src"  # the runner's cwd for the compile and every test (sandbox/runner.py)
FETCH_BYTES = 16 * 1024 * 1024  # files given back by one run, together; larger ones are left out


class FilePathError(ValueError):
    """A file's path the sandbox cannot place; the message names the path and says where files may go."""


def sandbox_path(path: str, isolated: bool) -> str:
    """`path` as an absolute path inside the sandbox, or FilePathError saying why it has none."""
    if not path or "\0" in path:
        raise FilePathError(f"{path!r}: a file needs a name (and no NUL character)")
    placed = posixpath.normpath(posixpath.join(WORKING_DIRECTORY, path))
    roots = (SANDBOX_ROOT, "/tmp") if isolated else (SANDBOX_ROOT,)
    if not any(placed.startswith(root + "/") for root in roots):
        where = " or ".join(f"under {root}" for root in roots)
        raise FilePathError(
            f"{path!r} lies at {placed}, outside what the program may write: give a path relative to its working "
            f"directory ({WORKING_DIRECTORY}) or {where}"
        )
    return placed


def from_base64(text: str) -> bytes:
    """A file's content as the wire carries it (SandboxFusion's `files`); ValueError saying so when it is not base64."""
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"the content is not base64 ({exc})") from exc


def decoded_files(files: Mapping[str, str | None]) -> dict[str, bytes]:
    """Each file's content decoded, null ones left out (SandboxFusion's restore_files skips them); ValueError naming
    the path whose content is not base64."""
    decoded = {}
    for path, content in files.items():
        if content is not None:
            try:
                decoded[path] = from_base64(content)
            except ValueError as exc:
                raise ValueError(f"{path!r}: {exc}") from None
    return decoded


def placed_files(files: Mapping[str, bytes], isolated: bool, sources: Sequence[str]) -> dict[str, bytes]:
    """The files to write before the run, by their absolute sandbox path; a path that would replace the program's
    own source is refused too."""
    placed: dict[str, bytes] = {}
    own = {posixpath.join(WORKING_DIRECTORY, source) for source in sources}
    for path, content in files.items():
        where = sandbox_path(path, isolated)
        if where in own:
            raise FilePathError(f"{path!r} would replace the program's own source file; name it otherwise")
        placed[where] = content
    return placed


def fetch_paths(fetch: Sequence[str], isolated: bool) -> dict[str, str]:
    """Each path to give back (the caller's name) -> its absolute sandbox path, how the runner reads and reports it."""
    return {path: sandbox_path(path, isolated) for path in fetch}


def fetched_by_name(wanted: Mapping[str, str], fetched: Mapping[str, str]) -> dict[str, str]:
    """What came back (by sandbox path: a file missing, or past FETCH_BYTES, is not there) by the caller's names
    (`wanted`: fetch_paths)."""
    return {name: fetched[path] for name, path in wanted.items() if path in fetched}
