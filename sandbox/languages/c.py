from sandbox.languages.base import Language

C = Language(
    name="c",
    source_file="main.c",
    compile=("/usr/bin/gcc", "-O2", "-std=gnu17", "-pipe", "-o", "main", "{source}", "-lm"),
    run=("./main",),
    unbounded_stack=True,
    apt=("gcc",),
    version=("/usr/bin/gcc", "--version"),
    tests_done='__builtin_printf("%s", "{marker}");',
    tests_done_at="block",
)
