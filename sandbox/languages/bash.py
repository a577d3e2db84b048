from sandbox.languages.base import Language

BASH = Language(
    name="bash",
    source_file="main.sh",
    run=("/usr/bin/bash", "{source}"),
    apt=("bash",),
    version=("/usr/bin/bash", "--version"),
    aliases=("sh", "shell"),
    forks=True,  # `$(...)`, pipelines and commands are processes
    tests_done="printf '%s' '{marker}'",
)
