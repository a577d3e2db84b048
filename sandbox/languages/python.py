from sandbox.languages.base import Language

# Run by the runner's own interpreter (/usr/bin/python3), forked per test: no start-up cost.
PYTHON = Language(
    name="python",
    source_file="main.py",
    run=("/usr/bin/python3", "-S", "{source}"),
    python_zygote=True,
    apt=("python3",),
    version=("/usr/bin/python3", "--version"),
    aliases=("python3", "py", "py3"),
)
