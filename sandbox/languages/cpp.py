from sandbox.languages import cpp_apart
from sandbox.languages.base import Language

COMPILE = ("/usr/bin/g++", "-O2", "-std=gnu++17", "-pipe", "-ftemplate-depth=1024")

CPP = Language(
    name="cpp",
    source_file="main.cpp",
    compile=(*COMPILE, "-o", "main", "{source}"),
    run=("./main",),
    unbounded_stack=True,
    apt=("g++",),
    version=("/usr/bin/g++", "--version"),
    aliases=("c++", "cxx"),
    tests_done='__builtin_printf("%s", "{marker}");',
    tests_done_at="block",
    apart_split=cpp_apart.split,
    apart_build=(*COMPILE, "-o", "tests", "{source}"),
    apart_program=("./main",),
    apart_tests=("/dev/fd/6",),  # the tests' binary, in memory (sandbox/runner.py run_suite_apart)
)
