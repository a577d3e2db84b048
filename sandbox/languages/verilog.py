from sandbox.languages.base import Language

VERILOG = Language(
    name="verilog",
    source_file="main.v",
    # IEEE 1800-2012, as SandboxFusion compiles (VerilogEval's testbenches use SystemVerilog's tasks and types).
    compile=("/usr/bin/iverilog", "-g2012", "-o", "main", "{source}"),
    run=("/usr/bin/vvp", "-n", "main"),
    apt=("iverilog",),
    version=("/usr/bin/iverilog", "-V"),
    aliases=("iverilog",),
    # the testbench ends with $finish: the marker just before it (a $finish of the program's own skips it)
    tests_done='$write("{marker}");',
    tests_done_at="before",
    tests_block=r"\$finish\b",
)
