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
)
