from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a bash of its own (sandbox/languages/apart.py).
SERVE_PROGRAM, RUN_TESTS = apart.scripts("sh")

BASH = Language(
    name="bash",
    source_file="main.sh",
    run=("/usr/bin/bash", "{source}"),
    apt=("bash",),
    version=("/usr/bin/bash", "--version"),
    aliases=("sh", "shell"),
    forks=True,  # `$(...)`, pipelines and commands are processes
    tests_done="printf '%s' '{marker}'",
    apart_program=("/usr/bin/bash", "-c", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/bash", "-c", literal(RUN_TESTS)),
)
