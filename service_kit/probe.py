"""Container health checks without curl: `python3 -m service_kit.probe [/readyz]`.

Asks the service in this container on its own port (`REWARD_API_PORT` or `SANDBOX_PORT`, whichever the
container sets) and exits 0 on a 2xx answer, 1 otherwise, so one health check serves every replica.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping

_PORT_VARIABLES = ("REWARD_API_PORT", "SANDBOX_PORT")


def probe(path: str, environ: Mapping[str, str] = os.environ, timeout_s: float = 5.0) -> str | None:
    """None when the service answers 2xx at `path`; otherwise what went wrong."""
    port = next((environ[name] for name in _PORT_VARIABLES if environ.get(name)), None)
    if port is None:
        return f"set one of {', '.join(_PORT_VARIABLES)} to the port the service listens on"
    url = f"http://127.0.0.1:{port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return None if 200 <= response.status < 300 else f"{url}: HTTP {response.status}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url}: {exc}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    problem = probe(args[0] if args else "/readyz")
    if problem:
        print(f"probe: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
