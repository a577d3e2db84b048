from sandbox.languages import d_apart
from sandbox.languages.base import Language
from sandbox.languages.d import D

# SandboxFusion's `D_ut` (and MultiPL-E's D): compiled with its unittest blocks, which run before main (or
# instead of it: druntime runs main only when there are none); --main adds an empty main when there is none.
D_UT = Language(
    name="d_ut",
    source_file=D.source_file,
    compile=("/usr/bin/ldc2", "-unittest", "--main", "-of=main", "{source}"),
    run=D.run,
    compile_address_space_limit=False,
    apt=D.apt,
    version=D.version,
    binds=D.binds,
    tests_done=D.tests_done,
    tests_done_at=D.tests_done_at,
    tests_block=D.tests_block,
    apart_split=d_apart.split,
    # The tests' binary, `tests`, which their process runs from memory (sandbox/runner.py run_suite_apart).
    apart_build=("/usr/bin/ldc2", "-unittest", "--main", "-of=tests", "{source}"),
    apart_program=("./main",),
    apart_tests=("/dev/fd/6",),
)
