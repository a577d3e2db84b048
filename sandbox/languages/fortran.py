from sandbox.languages.base import Language

FORTRAN = Language(
    name="fortran",
    source_file="main.f90",
    compile=("/usr/bin/gfortran", "-O2", "-o", "main", "{source}"),
    run=("./main",),
    env={"GFORTRAN_ERROR_BACKTRACE": "0"},  # an `error stop` prints its message, not a backtrace after it
    apt=("gfortran",),
    version=("/usr/bin/gfortran", "--version"),
    aliases=("f90", "gfortran"),
    # the tests are the main program: the marker goes before its end (a `stop` in the program skips it)
    tests_done="print '(a)', \"{marker}\"",
    tests_done_at="before",
    tests_block=r"(?im)^[ \t]*end[ \t]*program\b",
)
