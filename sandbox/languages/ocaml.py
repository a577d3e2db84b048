from sandbox.languages import ocaml_apart
from sandbox.languages.base import Language

OCAML = Language(
    name="ocaml",
    source_file="main.ml",
    compile=("/usr/bin/ocamlopt", "-o", "main", "str.cmxa", "{source}"),
    run=("./main",),
    apt=("ocaml-nox",),
    version=("/usr/bin/ocamlopt", "-version"),
    aliases=("ml",),
    tests_done='let () = print_string "{marker}"',
    apart_split=ocaml_apart.split,
    # The tests' binary, `tests`, which their process runs from memory (sandbox/runner.py run_suite_apart).
    apart_build=("/usr/bin/ocamlopt", "-o", "tests", "str.cmxa", "{source}"),
    apart_program=("./main",),
    apart_tests=("/dev/fd/6",),
)
