from sandbox.languages import rust_apart
from sandbox.languages.base import Language

RUSTC = ("/usr/bin/rustc", "-O", "--edition", "2021")
# Every crate may use the codec of tests run apart (rust_apart.py): it is linked only where used.
COMPILE = (*RUSTC, "--extern", f"judge_codec={rust_apart.CODEC_LIBRARY}")

RUST = Language(
    name="rust",
    source_file="main.rs",
    compile=(*COMPILE, "-o", "main", "{source}"),
    run=("./main",),
    apt=("rustc",),
    version=("/usr/bin/rustc", "--version"),
    compile_address_space_limit=False,
    aliases=("rs",),
    # `;`: the statement before may be the block's tail
    tests_done=';println!("{marker}");',
    tests_done_at="block",
    needs=(rust_apart.CODEC_LIBRARY,),
    setup=(rust_apart.build_codec(RUSTC),),
    apart_split=rust_apart.split,
    apart_build=(*COMPILE, "-o", "tests", "{source}"),
    apart_program=("./main",),
    apart_tests=("/dev/fd/6",),  # the tests' binary, in memory (sandbox/runner.py run_suite_apart)
)
