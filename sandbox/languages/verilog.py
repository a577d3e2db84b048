from sandbox.languages.base import Language

VERILOG = Language(
    name="verilog",
    source_file="main.v",
    compile=("/usr/bin/iverilog", "-o", "main", "{source}"),
    run=("/usr/bin/vvp", "-n", "main"),
    apt=("iverilog",),
    version=("/usr/bin/iverilog", "-V"),
    aliases=("iverilog",),
)
