from sandbox.languages import go_apart
from sandbox.languages.base import Language, literal
from sandbox.languages.go import GO

_GOPATH = "/usr/share/gocode"  # Debian's Go libraries
# A unit of two files (go_apart.py): $1 cut at its last line $2 into the files $3 and $4, then the build after them.
_TWO_FILES = (
    "/bin/sh", "-c",
    literal('at=$(grep -n -x -F "$2" "$1" | tail -n 1 | cut -d: -f1) && head -n "$((at - 1))" "$1" > "$3" && '
            'tail -n "+$((at + 1))" "$1" > "$4" && rm -f "$1" && shift 4 && exec "$@"'),
    "go_apart", "{source}", literal(go_apart.SPLIT),
)  # fmt: skip


# SandboxFusion's `go_test`: the program is a _test.go file (HumanEval-X's Go tests import testify, from
# Debian's /usr/share/gocode); built once into a test binary, which reports each test (-test.v).
GO_TEST = Language(
    name="go_test",
    source_file="main_test.go",
    compile=("/usr/bin/go", "test", "-c", "-o", "main.test", "{source}"),
    # `go test`'s package line after the tests pass ("ok", which SandboxFusion's callers look for).
    run=("/bin/sh", "-c", "./main.test -test.v && echo 'ok  \tcommand-line-arguments'"),
    apt=(*GO.apt, "golang-github-stretchr-testify-dev"),
    version=GO.version,
    address_space_limit=False,
    compile_address_space_limit=False,
    env=GO.env | {"GOPATH": f"/tmp/go:{_GOPATH}"},
    # Testify's packages installed as archives: otherwise every build compiles them again (~10 s).
    needs=(f"{_GOPATH}/pkg/linux_amd64/github.com/stretchr/testify/assert.a",),
    setup=(
        f"cache=$(mktemp -d) && GOPATH={_GOPATH} GO111MODULE=off GOCACHE=$cache go install gopkg.in/yaml.v3 "
        "github.com/davecgh/go-spew/spew github.com/pmezard/go-difflib/difflib github.com/stretchr/objx "
        "github.com/stretchr/testify/... && rm -rf $cache",
    ),
    report="go_test",
    forks=True,  # its run is a shell that starts the test binary
    aliases=("go_test.go",),  # MultiPL-E's name for its Go tests
    # go test runs tests in order
    tests_done='func TestZzzJudgeDone(t *testing.T) { print("{marker}") }',
    apart_split=go_apart.split,
    # The tests' test binary, `tests`, built from its two files, which their process runs from memory, reporting
    # each test (sandbox/runner.py run_suite_apart).
    apart_build=(
        *_TWO_FILES,
        "tests_test.go",
        "judge_ask_test.go",
        "/usr/bin/go",
        "test",
        "-c",
        "-o",
        "tests",
        "tests_test.go",
        "judge_ask_test.go",
    ),
    # The program with its server builds as package main, from its two files (go_apart.program_unit).
    apart_compile=(
        *_TWO_FILES,
        "program.go",
        "judge_server.go",
        "/usr/bin/go",
        "build",
        "-o",
        "main",
        "program.go",
        "judge_server.go",
    ),
    apart_program=("./main",),
    apart_tests=("/dev/fd/6", "-test.v"),
)
