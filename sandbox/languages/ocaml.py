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
)
