from sandbox.languages.base import Language
from sandbox.languages.go import GO

_GOPATH = "/usr/share/gocode"  # Debian's Go libraries

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
)
