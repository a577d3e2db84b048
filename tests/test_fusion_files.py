"""SandboxFusion's `files` and `fetch_files` on our `/run_code`, driven by its own client (`sandbox-fusion` from PyPI).

As SandboxFusion's runner tests use them: files placed before the run at a relative path (a flag file, a path
three directories deep) or an absolute one, read by the program; files the program writes given back base64.
A program compiled against a header it was given. Paths outside what the sandbox may write are a 422 naming the
path; what a program makes of its files (a symlink to a host file, a FIFO where a file is fetched, a disk filled
by uploads) is contained and reported.
"""

from __future__ import annotations

import base64

import httpx
import pytest
from sandbox_fusion import RunCodeRequest, run_code

from reward_api.local import LocalServer


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def fusion(sandbox: LocalServer, language: str, code: str, files: dict | None = None, fetch: list | None = None):
    request = RunCodeRequest(
        code=code, language=language, files=files or {}, fetch_files=fetch or [], run_timeout=5, compile_timeout=60
    )
    return run_code(request, endpoint=sandbox.url, max_attempts=1)


READS = {
    "python": 'print(open("flag.txt").read(), open("dir1/dir2/dir3/secret_flag").read(), open("/tmp/abs").read())',
    "nodejs": 'const fs = require("fs");\nconst paths = ["flag.txt", "dir1/dir2/dir3/secret_flag", "/tmp/abs"];\n'
    'console.log(paths.map(p => fs.readFileSync(p, "utf8")).join(" "))',
    "bash": "echo $(cat flag.txt) $(cat dir1/dir2/dir3/secret_flag) $(cat /tmp/abs)",
    "cpp": "#include <fstream>\n#include <iostream>\n#include <string>\n"
    "std::string slurp(const char *p) { std::ifstream f(p); std::string s; std::getline(f, s); return s; }\n"
    'int main() { std::cout << slurp("flag.txt") << " " << slurp("dir1/dir2/dir3/secret_flag") << " "'
    ' << slurp("/tmp/abs") << std::endl; }',
}
GIVEN = {"flag.txt": b64(b"FLAG-1"), "dir1/dir2/dir3/secret_flag": b64(b"deep-2"), "/tmp/abs": b64(b"abs-3")}


@pytest.mark.parametrize("language", list(READS))
def test_a_program_reads_the_files_it_was_given(sandbox: LocalServer, language: str) -> None:
    result = fusion(sandbox, language, READS[language], files=GIVEN)
    assert result.status.value == "Success", result
    assert result.run_result.stdout.split() == ["FLAG-1", "deep-2", "abs-3"]


@pytest.mark.parametrize("language", list(READS))
def test_without_the_files_the_same_program_fails(sandbox: LocalServer, language: str) -> None:
    result = fusion(sandbox, language, READS[language])
    assert result.status.value == "Failed" or result.run_result.stdout.split() != ["FLAG-1", "deep-2", "abs-3"]


WRITES = (
    'import os\nopen("out.txt", "w").write("relative")\nos.makedirs("/tmp/a/b", exist_ok=True)\n'
    'open("/tmp/a/b/out.bin", "wb").write(bytes(range(256)))\nopen("/sandbox/top.txt", "w").write("top")\n'
)


def test_the_files_a_program_writes_come_back_and_missing_ones_are_left_out(sandbox: LocalServer) -> None:
    fetch = ["out.txt", "/tmp/a/b/out.bin", "/sandbox/top.txt", "never-written.txt", "flag.txt"]
    result = fusion(sandbox, "python", WRITES, files={"flag.txt": b64(b"given")}, fetch=fetch)
    assert result.status.value == "Success", result
    assert {name: base64.b64decode(content) for name, content in result.files.items()} == {
        "out.txt": b"relative",
        "/tmp/a/b/out.bin": bytes(range(256)),
        "/sandbox/top.txt": b"top",
        "flag.txt": b"given",
    }


def test_a_program_compiles_against_a_header_it_was_given(sandbox: LocalServer) -> None:
    code = '#include <cstdio>\n#include "lib/answer.h"\nint main() { std::printf("%d\\n", ANSWER); }'
    result = fusion(sandbox, "cpp", code, files={"lib/answer.h": b64(b"#define ANSWER 42\n")})
    assert (result.status.value, result.run_result.stdout.strip()) == ("Success", "42"), result
    result = fusion(sandbox, "cpp", code, files={"lib/answer.h": b64(b"#define ANSWER 7\n")})  # not a cached compile
    assert (result.status.value, result.run_result.stdout.strip()) == ("Success", "7"), result


def test_skipped_files_as_sandbox_fusion_skips_them(sandbox: LocalServer) -> None:
    code = 'import os\nprint(sorted(n for n in os.listdir(".") if n != "main.py"))'
    files = {"kept.txt": b64(b"x"), "none.txt": None, "a_IGNORE_THIS_FILE.txt": b64(b"y")}
    result = fusion(sandbox, "python", code, files=files)
    assert result.run_result.stdout.strip() == "['kept.txt']", result


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("files", {"../../etc/passwd": b64(b"x")}, ["body", "files", "../../etc/passwd"]),
        ("files", {"/etc/cron.d/job": b64(b"x")}, ["body", "files", "/etc/cron.d/job"]),
        ("files", {"/usr/lib/x": b64(b"x")}, ["body", "files", "/usr/lib/x"]),
        ("fetch_files", ["ok.txt", "/etc/shadow"], ["body", "fetch_files", 1]),
        ("fetch_files", ["../../../proc/self/environ"], ["body", "fetch_files", 0]),
        ("files", {"ok.txt": "not base64 !"}, ["body", "files"]),
    ],
)
def test_paths_the_sandbox_cannot_place_are_a_422_naming_them(
    sandbox: LocalServer, field: str, value: object, named: list
) -> None:
    body = {"code": "print(1)", "language": "python", field: value}
    answer = httpx.post(f"{sandbox.url}/run_code", json=body, timeout=30)
    assert answer.status_code == 422, answer.text
    assert any(detail["loc"][: len(named)] == named for detail in answer.json()["detail"]), answer.text


HOSTILE = {
    # A symlink to the host's secrets: inside the sandbox there is no such file to read.
    "symlink-to-host-file": ('import os\nos.symlink("/etc/shadow", "leak")\nos.symlink("/root", "home")\n', ["leak"]),
    # A FIFO where a file is fetched, its writer gone: fetching it must not hang the run.
    "fifo-fetched": ('import os\nos.mkfifo("out.txt")\n', ["out.txt"]),
    # A directory where a file is fetched.
    "directory-fetched": ('import os\nos.makedirs("out.txt")\n', ["out.txt"]),
}


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_what_a_program_leaves_where_files_are_fetched_gives_nothing_back(sandbox: LocalServer, attack: str) -> None:
    code, fetch = HOSTILE[attack]
    result = fusion(sandbox, "python", code, fetch=fetch)
    assert result.status.value == "Success", result
    assert result.files == {}


def test_a_body_past_the_services_bound_is_a_413_and_the_service_goes_on(sandbox: LocalServer) -> None:
    body = {"code": "print(1)", "language": "python", "files": {"big.bin": b64(bytes(60 * 1024 * 1024))}}
    assert httpx.post(f"{sandbox.url}/run_code", json=body, timeout=60).status_code == 413
    again = fusion(sandbox, "python", 'print(open("flag.txt").read())', files={"flag.txt": b64(b"still here")})
    assert again.run_result.stdout.strip() == "still here"


def test_uploads_past_the_sandboxs_disk_are_a_sandbox_error(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A service whose bodies may hold more than a run's disk (64 MB): the run says so, no program runs."""
    settings = {"SANDBOX_WORKERS": "1", "SANDBOX_MAX_BODY_MB": "200", "SANDBOX_MAX_BODY_MB_IN_FLIGHT": "400"}
    with LocalServer.sandbox(tmp_path_factory.mktemp("big"), **settings) as server:
        files = {f"part{i}.bin": b64(bytes(20 * 1024 * 1024)) for i in range(4)}  # 80 MB
        with pytest.raises(Exception, match="the run's files do not fit the sandbox's disk"):  # a SandboxError there
            fusion(server, "python", "print(1)", files=files)
