"""bench/runtime_coverage.py on two small code sets: each problem's imports, tried in the real sandbox.

A HumanEval-style set (gzipped: prompt + canonical_solution, and its test) and one with `code` and `solution`
fields: a problem is covered when every module it imports imports in the sandbox (the standard library, numpy),
SandboxFusion's share counts its requirements by import name (scikit-learn as sklearn), relative imports are
skipped, and a module no runtime has is listed as missing.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from bench import runtime_coverage

SCRIPT = Path(runtime_coverage.__file__)

HUMANEVAL_STYLE = [
    {"prompt": "import math\ndef root(x):\n", "canonical_solution": "    return math.sqrt(x)\n",
     "test": "def check(candidate):\n    assert candidate(4) == 2\n"},
    {"prompt": "from typing import List\nimport numpy as np\ndef total(xs: List[int]):\n",
     "canonical_solution": "    return int(np.sum(xs))\n", "test": "import collections.abc\n"},
]  # fmt: skip
OTHER_STYLE = [
    {"code": "import nosuchdist_for_coverage\n"},  # a SandboxFusion requirement's module (below), not here
    {"solution": "from . import sibling\nimport heapq\nprint(heapq.nsmallest(1, [3, 1]))"},
    {"solution": "def fit(x, y):\n    pass\n", "test": "from numpy.linalg import lstsq\n"},
    {"code": "import nosuchmodule_for_coverage\n"},
]
REQUIREMENTS = "numpy==1.26.3\nscikit-learn==1.4.0\nNoSuchDist-For-Coverage==1.0  # not on any index\n"


def test_requirements_are_read_as_the_modules_they_install(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(REQUIREMENTS + "# a comment\nbeautifulsoup4>=4\nPyYAML[extra]~=6.0\n\nopencv-python==4.9\n")
    assert runtime_coverage.fusion_modules(requirements) == {
        "numpy", "sklearn", "nosuchdist_for_coverage", "bs4", "yaml", "cv2",
    }  # fmt: skip


def test_the_coverage_table_counts_problems_by_what_imports_in_the_sandbox(tmp_path: Path) -> None:
    humaneval, other, requirements = tmp_path / "he.jsonl.gz", tmp_path / "other.jsonl", tmp_path / "req.txt"
    with gzip.open(humaneval, "wt") as out:
        out.writelines(json.dumps(problem) + "\n" for problem in HUMANEVAL_STYLE)
    other.write_text("".join(json.dumps(problem) + "\n" for problem in OTHER_STYLE))
    requirements.write_text(REQUIREMENTS)
    argv = [sys.executable, str(SCRIPT), "--set", f"he={humaneval}", "--set", f"other={other}"]
    done = subprocess.run([*argv, "--fusion-requirements", str(requirements)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "| he | 2 | 1/2 (50.0%) | 2/2 (100.0%) | 2/2 (100.0%) |" in lines, done.stdout
    assert "| other | 4 | 1/4 (25.0%) | 2/4 (50.0%) | 3/4 (75.0%) |" in lines, done.stdout
    missing = next(line for line in lines if line.startswith("other: missing"))
    assert set(missing.split(": ")[-1].split(", ")) == {"nosuchdist_for_coverage (1)", "nosuchmodule_for_coverage (1)"}
    assert "he: missing in the sandbox, by problems that need it: none" in lines
