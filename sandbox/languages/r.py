import os

from sandbox.languages import apart
from sandbox.languages.base import Language

# A program suite's tests run apart from the program, each in an R of its own (sandbox/languages/apart.py), from
# files: Rscript takes ~0.13 s longer to start from code on its command line.
(SERVE_PROGRAM, RUN_TESTS), _WRITE_SCRIPTS = apart.installed_scripts("R")
_RSCRIPT = ("/usr/bin/Rscript", "--vanilla")

# R_HOME's etc/ is a link into /etc/R (Renviron, Rprofile.site); R starts in ~0.2 s. R refuses to start unless
# the open-files limit holds its DLL table (100 entries) at 60%.
R = Language(
    name="r",
    source_file="main.R",
    run=(*_RSCRIPT, "{source}"),
    apt=("r-base-core",),
    version=("/usr/bin/Rscript", "--version"),
    binds=("/etc/R",),
    open_files_floor=256,
    start_s=0.5,
    address_space_limit=False,
    tests_done='cat("{marker}")',
    forks=True,  # /usr/bin/R is a shell script that starts the interpreter
    needs=(SERVE_PROGRAM, RUN_TESTS),
    setup=(_WRITE_SCRIPTS,),
    apart_program=(*_RSCRIPT, SERVE_PROGRAM, "{source}"),
    apart_tests=(*_RSCRIPT, RUN_TESTS),
    # Rscript runs the shell script /usr/bin/R, which execs the interpreter: the tests' process is ready from there.
    apart_tests_env={"JUDGE_READY_EXE": os.path.realpath("/usr/lib/R/bin/exec/R")},
)
