from sandbox.languages import haskell_apart
from sandbox.languages.base import Language

# GHC's runtime reserves a terabyte of address space: the run's cgroup bounds its memory.
HASKELL = Language(
    name="haskell",
    source_file="Main.hs",
    compile=("/usr/bin/ghc", "-O1", "-o", "main", "-outputdir", "/tmp/ghc", "{source}"),
    run=("./main",),
    address_space_limit=False,
    compile_address_space_limit=False,
    apt=("ghc",),
    version=("/usr/bin/ghc", "--version"),
    binds=("/var/lib/ghc",),
    compile_memory_floor_mb=1536,
    compile_floor_s=30.0,
    aliases=("hs",),
    refused_in_source=(
        r"(?is)\{-#\s*OPTIONS(?:_GHC)?\b(?:(?!#-\}).)*?(?:\s-F\b|-pgm|-opt|plugin|-package)(?:(?!#-\}).)*#-\}"
        r"|\{-#\s*LANGUAGE\b(?:(?!#-\}).)*?\b(?:TemplateHaskell\w*|QuasiQuotes|CPP)\b(?:(?!#-\}).)*#-\}",
        "GHC options, preprocessors and plugins a source file turns on (-F, -pgm*, -opt*, -fplugin, -package), "
        "Template Haskell, quasi-quotes and CPP are off in the sandbox: they would run code of the program's choosing "
        "over the whole file, tests included",
    ),
    tests_done='putStr "{marker}"',
    tests_done_at="indented",  # MultiPL-E's tests end in `main = do`
    apart_split=haskell_apart.split,
    # The tests' binary, `tests`, which their process runs from memory (sandbox/runner.py run_suite_apart); -O0: it
    # is small, and built once a prompt.
    apart_build=("/usr/bin/ghc", "-O0", "-o", "tests", "-outputdir", "/tmp/ghc", "{source}"),
    apart_program=("./main",),
    apart_tests=("/dev/fd/6",),
)
