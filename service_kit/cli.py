"""What both services' command lines share: JSON log lines and one way to fail."""

from __future__ import annotations

import argparse
import json
import logging
import sys

_STANDARD_LOG_FIELDS = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message"}


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any `extra=` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry |= {k: v for k, v in vars(record).items() if k not in _STANDARD_LOG_FIELDS}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


def run_command(
    parser: argparse.ArgumentParser, argv: list[str] | None, expected: tuple[type[Exception], ...] = ()
) -> int:
    """Run the chosen sub-command (each sets `run`); an expected failure (bad settings, a busy port, or one of
    `expected`) prints `<prog>: error: ...` and exits 2, without a traceback."""
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError, *expected) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
