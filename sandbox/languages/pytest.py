from sandbox.languages.base import Language

# SandboxFusion's `pytest`: the program is a test module; pytest runs it and reports each test (-rA).
PYTEST = Language(
    name="pytest",
    source_file="test_main.py",
    run=("/usr/bin/python3", "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "--color=no", "{source}"),
    apt=("python3-pytest",),
    version=("/usr/bin/python3", "-m", "pytest", "--version"),
    needs=("/usr/lib/python3/dist-packages/pytest",),
    report="pytest",
    start_s=0.3,
    # pytest runs a file's tests in order
    tests_done='def test_zzz_judge_done():\n    print("{marker}")',
)
