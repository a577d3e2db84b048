"""`reward-api serve` runs the service; `reward-api grade in.jsonl -o out.jsonl` grades a file offline."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reward_api.config import Config
from reward_api.profiles import PRESETS, ProfileOverride, resolve_profile
from sandbox.isolation import IsolationUnavailable
from service_kit.cli import configure_logging, run_command


def _serve(args: argparse.Namespace) -> int:
    from reward_api.app import create_app, settle_heap
    from service_kit.http_guard import serve

    config = Config.from_env(host=args.host, port=args.port, workers=args.workers, item_deadline_s=args.deadline)
    configure_logging(config.log_level)
    app = create_app(config)
    settle_heap()
    serve(app, config)
    return 0


def _read_items(path: Path) -> Iterator[Any]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                yield line  # not an object: graded as an invalid item, not a crash


def _load_profile(spec: str) -> ProfileOverride | str:
    """A preset name, inline JSON, or @file.json."""
    if spec.startswith("@"):
        spec = Path(spec[1:]).read_text(encoding="utf-8")
    if spec.lstrip().startswith("{"):
        return ProfileOverride.model_validate_json(spec)
    return spec


async def _grade_file(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from reward_api.engine import RewardEngine

    config = Config.from_env(workers=args.workers, item_deadline_s=args.deadline)
    profile = resolve_profile(_load_profile(args.profile or config.default_profile))
    items = list(_read_items(args.input))
    engine = RewardEngine(config)
    await engine.start()
    statuses: dict[str, int] = {}
    try:
        with args.output.open("w", encoding="utf-8") as out, tqdm(total=len(items), unit="item") as bar:
            for start in range(0, len(items), args.batch_size):
                batch = items[start : start + args.batch_size]
                for result in await engine.grade(batch, profile):
                    out.write(result.model_dump_json() + "\n")
                    statuses[result.status] = statuses.get(result.status, 0) + 1
                bar.update(len(batch))
    finally:
        await engine.close()
    print(f"graded {len(items)} items -> {args.output}: {statuses}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reward-api", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="bind address (default 127.0.0.1, env REWARD_API_HOST)")
    serve.add_argument("--port", type=int, help="port (default 8000, env REWARD_API_PORT)")
    serve.add_argument("--workers", type=int, help="grading processes (default: one per core)")
    serve.add_argument("--deadline", type=float, help="hard per-item deadline in seconds (default 10)")
    serve.set_defaults(run=_serve)

    grade = commands.add_parser("grade", help="grade a JSONL file of items offline")
    grade.add_argument("input", type=Path, help="JSONL, one item per line (same fields as the API)")
    grade.add_argument("-o", "--output", type=Path, required=True, help="JSONL results, one per input line")
    grade.add_argument("--profile", help=f"preset ({', '.join(sorted(PRESETS))}), inline JSON, or @profile.json")
    grade.add_argument("--batch-size", type=int, default=256)
    grade.add_argument("--workers", type=int, help="grading processes (default: one per core)")
    grade.add_argument("--deadline", type=float, help="hard per-item deadline in seconds (default 10)")
    grade.set_defaults(run=lambda args: asyncio.run(_grade_file(args)))
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv, expected=(IsolationUnavailable,))


if __name__ == "__main__":
    sys.exit(main())
