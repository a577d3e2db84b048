from sandbox.languages.base import Language

D = Language(
    name="d",
    source_file="main.d",
    compile=("/usr/bin/ldc2", "-O", "-of=main", "{source}"),
    run=("./main",),
    compile_address_space_limit=False,
    apt=("ldc",),
    version=("/usr/bin/ldc2", "--version"),
    binds=("/etc/ldc2.conf",),
    aliases=("dlang",),
    tests_run_as="d_ut",
    # Last in the last unittest block: with unittests, druntime runs them and not main.
    tests_done='import std.stdio : write; write("{marker}");',
    tests_done_at="block",
    tests_block=r"\bunittest\b",
)
