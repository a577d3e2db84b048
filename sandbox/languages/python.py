from sandbox.languages.base import Language

# Run by the runner's own interpreter (/usr/bin/python3), forked per test: no start-up cost.
PYTHON = Language(
    name="python",
    source_file="main.py",
    run=("/usr/bin/python3", "-S", "{source}"),
    python_zygote=True,
    # The runtime libraries (the default set): numpy and sortedcontainers, what competitive and LeetCode-style
    # solutions import beyond the standard library; the sandbox sees Debian's packages read-only (sandbox/runner.py
    # puts their directory on the path).
    apt=("python3", "python3-numpy", "python3-sortedcontainers"),
    version=("/usr/bin/python3", "--version"),
    aliases=("python3", "py", "py3"),
)
