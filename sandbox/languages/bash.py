from sandbox.languages.base import Language

BASH = Language(
    name="bash",
    source_file="main.sh",
    run=("/usr/bin/bash", "{source}"),
    apt=("bash",),
    version=("/usr/bin/bash", "--version"),
    aliases=("sh", "shell"),
    tests_done="printf '%s' '{marker}'",
)
