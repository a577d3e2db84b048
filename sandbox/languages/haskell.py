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
    tests_done='putStr "{marker}"',
    tests_done_at="indented",  # MultiPL-E's tests end in `main = do`
)
