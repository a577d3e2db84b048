"""Run this checkout's code as an ordinary user, as most of our users run the service.

The test venv's interpreter lives under /root (pyenv), which other users cannot read, and the
checkout may sit below a directory only root may enter. So the command runs in a private mount
namespace where the checkout is bind-mounted at a path anyone can reach, with Debian's
/usr/bin/python3 (the same 3.11 ABI as the venv) and the venv's site-packages on PYTHONPATH.
"""

from __future__ import annotations

import shlex
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
USER_PYTHON = "/usr/bin/python3"


def public_site_packages(public_repo: Path) -> str:
    """The venv's site-packages as seen through the bind mount (the venv must live inside the checkout)."""
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    try:
        return str(public_repo / site.relative_to(REPO))
    except ValueError:
        raise RuntimeError(f"the test venv ({site}) must be inside the checkout ({REPO}): run `make test`") from None


def as_user_argv(uid: int, argv: list[str], env: dict[str, str] | None = None) -> list[str]:
    """`argv` (its first word `python` or this interpreter means USER_PYTHON) run as `uid` in the checkout,
    with `env` (less what must point at the public paths: HOME, PATH, PYTHONPATH)."""
    public = Path(tempfile.mkdtemp(prefix="reward-public-", dir="/tmp"))
    public.chmod(0o755)
    (public / "repo").mkdir()
    (public / "home").mkdir()
    (public / "home").chmod(0o1777)
    repo = public / "repo"
    variables = (env or {}) | {
        "HOME": str(public / "home"),
        "TMPDIR": str(public / "home"),  # not /tmp: nothing of the user's is left there
        "SANDBOX_COMPILE_CACHE_DIR": str(public / "home" / "compile-cache"),  # the user's own, as it must be
        "PYTHONPATH": f"{public_site_packages(repo)}:{repo}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
    }
    command = [USER_PYTHON if argv[0] in ("python", sys.executable) else argv[0], *argv[1:]]
    inner = (
        f"mount --bind {shlex.quote(str(REPO))} {shlex.quote(str(repo))} && cd {shlex.quote(str(repo))} && "
        f"exec setpriv --reuid={uid} --regid={uid} --clear-groups --inh-caps=-all "
        f"env -i {' '.join(shlex.quote(f'{k}={v}') for k, v in variables.items())} {shlex.join(command)}"
    )
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", inner]
