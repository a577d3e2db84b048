from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a Racket of its own (sandbox/languages/apart.py).
SERVE_PROGRAM, RUN_TESTS = apart.scripts("rkt")

RACKET = Language(
    name="racket",
    source_file="main.rkt",
    run=("/usr/bin/racket", "{source}"),
    address_space_limit=False,
    apt=("racket",),
    version=("/usr/bin/racket", "--version"),
    binds=("/etc/racket",),
    start_s=0.5,
    aliases=("rkt",),
    stderr_fails=True,  # rackunit reports a failed check on stderr and exits 0
    tests_done='(display "{marker}")',
    # racket/base as the scripts' language: `racket -e` would load all of `racket/init` first (0.3 s)
    apart_program=("/usr/bin/racket", "-I", "racket/base", "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/racket", "-I", "racket/base", "-e", literal(RUN_TESTS)),
)
