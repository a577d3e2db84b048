from sandbox.languages.base import Language

# Run in the test's own process, apart from the program's (sandbox/runner.py run_apart): the reference's test file as
# an in-memory module (its name on disk is an empty file: the program's process finds no test there), the program
# as module `solution` (and `main`) and under the names the tests use, pytest collecting the module from memory. No
# conftest, ini file or plugin that the program could write is read: the file's directory is the program's to write.
APART_HARNESS = """
import linecache, os, tempfile
import pytest
__judge__.module("solution")
__judge__.module("main")
_directory = tempfile.mkdtemp(prefix="judge-tests-")
_path = os.path.join(_directory, "test_main.py")
open(_path, "w").close()
_source = {tests}
linecache.cache[_path] = (len(_source), None, _source.splitlines(True), _path)
_tests = __judge__.test_module("test_main", _path, _source)


class _FromMemory:
    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makemodule(self, module_path, parent):
        if str(module_path) == _path:
            module = pytest.Module.from_parent(parent, path=module_path)
            module._obj = _tests
            return module


_options = ["-q", "-rA", "--color=no", "-p", "no:cacheprovider", "--noconftest", "-c", os.devnull]
_exit_code = int(pytest.main([*_options, "--rootdir", _directory, _path], plugins=[_FromMemory()]))
if _exit_code != 0:
    raise SystemExit(_exit_code)
__judge__.done({marker})
"""

# SandboxFusion's `pytest`: the program is a test module; pytest runs it and reports each test (-rA). The reference's
# tests (`{"language": "pytest", "test": ...}`) run apart from the answer's program (APART_HARNESS), which they reach
# by its names or as module `solution` (KodCode's `from solution import f`).
PYTEST = Language(
    name="pytest",
    source_file="test_main.py",
    run=("/usr/bin/python3", "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "--color=no", "{source}"),
    apt=("python3-pytest",),
    version=("/usr/bin/python3", "-m", "pytest", "--version"),
    needs=("/usr/lib/python3/dist-packages/pytest",),
    report="pytest",
    start_s=0.3,
    apart_harness=APART_HARNESS,
)
