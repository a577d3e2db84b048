from sandbox.languages.base import Language

RUST = Language(
    name="rust",
    source_file="main.rs",
    compile=("/usr/bin/rustc", "-O", "--edition", "2021", "-o", "main", "{source}"),
    run=("./main",),
    apt=("rustc",),
    version=("/usr/bin/rustc", "--version"),
    compile_address_space_limit=False,
    aliases=("rs",),
    # `;`: the statement before may be the block's tail
    tests_done=';println!("{marker}");',
    tests_done_at="block",
)
