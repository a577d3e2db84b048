import glob

from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# A program suite's tests run apart from the program, each in a BEAM of its own (sandbox/languages/apart.py). The
# elixir command execs the BEAM through two scripts: the tests' process says it is ready from the BEAM's own binary.
SERVE_PROGRAM, RUN_TESTS = apart.scripts("exs")
BEAM = next(iter(sorted(glob.glob("/usr/lib/erlang/erts-*/bin/beam.smp"))), "/usr/lib/erlang/erts/bin/beam.smp")

ELIXIR = Language(
    name="elixir",
    source_file="main.exs",
    run=("/usr/bin/elixir", "{source}"),
    address_space_limit=False,
    apt=("elixir",),
    version=("/usr/bin/elixir", "--short-version"),
    start_s=0.5,
    aliases=("ex", "exs"),
    forks=True,  # /usr/bin/elixir is a shell script, and the BEAM starts a helper process
    tests_done='ExUnit.after_suite(fn _ -> IO.write("{marker}") end)',
    apart_program=("/usr/bin/elixir", "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=("/usr/bin/elixir", "-e", literal(RUN_TESTS)),
    apart_tests_env={"JUDGE_READY_EXE": BEAM},
    needs=(BEAM,),
)
