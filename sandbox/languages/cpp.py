from sandbox.languages.base import Language

CPP = Language(
    name="cpp",
    source_file="main.cpp",
    compile=("/usr/bin/g++", "-O2", "-std=gnu++17", "-pipe", "-ftemplate-depth=1024", "-o", "main", "{source}"),
    run=("./main",),
    unbounded_stack=True,
    apt=("g++",),
    version=("/usr/bin/g++", "--version"),
    aliases=("c++", "cxx"),
    tests_done='__builtin_printf("%s", "{marker}");',
    tests_done_at="block",
)
