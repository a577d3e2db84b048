"""`sandbox serve` runs the code sandbox as an HTTP service (settings: sandbox/service.py ServiceConfig)."""

from __future__ import annotations

import argparse
import sys

from sandbox.isolation import Isolation, IsolationUnavailable
from service_kit.cli import configure_logging, run_command


def _serve(args: argparse.Namespace) -> int:
    from sandbox.service import ServiceConfig, create_app
    from service_kit.http_guard import serve

    config = ServiceConfig.from_env(host=args.host, port=args.port, workers=args.workers, isolation=args.isolation)
    configure_logging(config.log_level)
    try:
        app = create_app(config)
    except IsolationUnavailable as exc:
        print(f"sandbox: refusing to start: {exc}", file=sys.stderr)
        print("sandbox: `--isolation none` runs programs unsandboxed, for trusted code only", file=sys.stderr)
        return 2
    except ValueError as exc:  # a setting the service cannot use (the compile cache's directory)
        print(f"sandbox: refusing to start: {exc}", file=sys.stderr)
        return 2
    serve(app, config)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sandbox", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="bind address (default 127.0.0.1, env SANDBOX_HOST)")
    serve.add_argument("--port", type=int, help="port (default 8080, env SANDBOX_PORT)")
    serve.add_argument(
        "--workers", type=int, help="sandboxes running at once (default: one per core, env SANDBOX_WORKERS)"
    )
    serve.add_argument(
        "--isolation",
        choices=[i.value for i in Isolation],
        help="bwrap (default, env SANDBOX_ISOLATION) or none: no isolation, trusted code only",
    )
    serve.set_defaults(run=_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
