"""Which share of a code set's problems the sandbox's Python runtime can run: their imports, against what imports.

Each problem's reference program (`prompt` + `canonical_solution`, or `solution`/`code`) and its tests (`test`) are
parsed for the top-level modules they import (`import a.b`, `from a import b`; relative imports skipped). Every
module named anywhere is then tried in the real sandbox, as a program would import it (sandbox/executor.py), and a
problem counts as covered when all of its modules import there. Beside that, the problems SandboxFusion's runtime
would cover by name: the standard library and the import names of its `runtime/python/requirements.txt`
(distributions mapped to modules; what those pull in is not counted, so its share is a floor).

    .venv/bin/python bench/runtime_coverage.py --set humaneval=HumanEval.jsonl.gz \\
        --set bigcodebench=BigCodeBench.jsonl.gz [--fusion-requirements SandboxFusion/runtime/python/requirements.txt]

The sets are JSON lines, gzipped or not (HumanEval's `data/HumanEval.jsonl.gz` in openai/human-eval, BigCodeBench's
`data/BigCodeBench.jsonl.gz` in bigcode-project/bigcodebench-annotation). Prints a table per set and the modules
the sandbox lacks that most problems need.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.executor import Executor, Limits, TestInput

# Fields holding a problem's programs: reference code (a prompt and the body that completes it) and tests.
PROGRAM_FIELDS = (("prompt", "canonical_solution"), ("solution",), ("code",), ("test",))
# Distributions whose import name is not their name (lowercased, - as _).
MODULE_OF = {
    "scikit-learn": "sklearn", "scikit-image": "skimage", "beautifulsoup4": "bs4", "opencv-python": "cv2",
    "pillow": "PIL", "python-docx": "docx", "pycryptodome": "Crypto", "pycryptodomex": "Cryptodome",
    "pyyaml": "yaml", "gitpython": "git", "pyjwt": "jwt", "pymupdf": "fitz", "faiss-cpu": "faiss",
    "absl-py": "absl", "antlr4-python3-runtime": "antlr4", "grpcio-tools": "grpc_tools", "grpcio": "grpc",
    "python-dateutil": "dateutil", "attrs": "attr", "protobuf": "google", "pyzmq": "zmq",
    "python-levenshtein": "Levenshtein", "opencv-python-headless": "cv2", "msgpack-python": "msgpack",
}  # fmt: skip
# Tries each module named on stdin in the sandbox and prints those that import.
PROBE = """
import importlib, json, sys
names = json.loads(sys.stdin.read())
found = []
for name in names:
    try:
        importlib.import_module(name)
        found.append(name)
    except BaseException:
        pass
print(json.dumps(found))
"""


@dataclass
class Coverage:
    problems: int
    by_sandbox: int
    by_standard_library: int
    by_fusion: int | None
    missing: Counter[str]  # module -> problems that need it and the sandbox lacks


def read_problems(path: Path) -> Iterator[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def imported_modules(source: str) -> set[str]:
    """Top-level modules `source` imports; by a line scan when it does not parse (a fragment)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", source, re.MULTILINE))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


def problem_modules(problem: dict) -> set[str]:
    modules: set[str] = set()
    for fields in PROGRAM_FIELDS:
        parts = [problem[field] for field in fields if isinstance(problem.get(field), str)]
        if len(parts) == len(fields):
            modules |= imported_modules("".join(parts))
    return modules


def fusion_modules(requirements: Path) -> set[str]:
    """Import names of a requirements file's distributions, lowercased."""
    modules = set()
    for line in requirements.read_text().splitlines():
        name = re.split(r"[<>=!~\[;\s]", line.strip(), maxsplit=1)[0]
        if name and not name.startswith("#"):
            modules.add(MODULE_OF.get(name.lower(), name.lower().replace("-", "_")).lower())
    return modules


def importable_in_sandbox(modules: Iterable[str]) -> set[str]:
    names = sorted(modules)
    limits = Limits(time_s=60, wall_s=120, memory_mb=2048)
    execution = Executor().run("python", PROBE, [TestInput(stdin=json.dumps(names))], limits)
    [result] = execution.tests
    if execution.sandbox_error or result is None or not result.ok:
        raise RuntimeError(f"the probe failed: {execution.sandbox_error or (result and result.stderr)}")
    return set(json.loads(result.stdout))


def coverage(problems: list[set[str]], sandbox: set[str], fusion: set[str] | None) -> Coverage:
    standard = set(sys.stdlib_module_names)
    missing: Counter[str] = Counter()
    for modules in problems:
        missing.update(modules - sandbox)
    return Coverage(
        problems=len(problems),
        by_sandbox=sum(modules <= sandbox for modules in problems),
        by_standard_library=sum(modules <= standard for modules in problems),
        by_fusion=None if fusion is None else sum({m.lower() for m in modules} <= fusion for modules in problems),
        missing=missing,
    )


def _share(count: int, total: int) -> str:
    return f"{count}/{total} ({100 * count / max(total, 1):.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", required=True, metavar="NAME=PATH", help="a code set (JSON lines)")
    parser.add_argument("--fusion-requirements", type=Path, help="SandboxFusion's runtime/python/requirements.txt")
    parser.add_argument("--top", type=int, default=8, help="missing modules listed per set")
    args = parser.parse_args()
    sets = {name: [problem_modules(p) for p in read_problems(Path(path))] for name, path in map(_named, args.set)}
    sandbox = importable_in_sandbox(set().union(*(m for problems in sets.values() for m in problems)))
    fusion = None
    if args.fusion_requirements:
        fusion = fusion_modules(args.fusion_requirements) | {m.lower() for m in sys.stdlib_module_names}
    print("| set | problems | standard library only | this sandbox, as installed | SandboxFusion's runtime |")
    print("| --- | --- | --- | --- | --- |")
    results = {name: coverage(problems, sandbox, fusion) for name, problems in sets.items()}
    for name, found in results.items():
        fusion_share = "-" if found.by_fusion is None else _share(found.by_fusion, found.problems)
        print(
            f"| {name} | {found.problems} | {_share(found.by_standard_library, found.problems)} "
            f"| {_share(found.by_sandbox, found.problems)} | {fusion_share} |"
        )
    for name, found in results.items():
        top = ", ".join(f"{module} ({count})" for module, count in found.missing.most_common(args.top))
        print(f"{name}: missing in the sandbox, by problems that need it: {top or 'none'}")


def _named(text: str) -> tuple[str, str]:
    name, _, path = text.partition("=")
    if not path:
        raise SystemExit(f"--set {text!r}: give NAME=PATH")
    return name, path


if __name__ == "__main__":
    main()
