from sandbox.languages.base import Language

GO = Language(
    name="go",
    source_file="main.go",
    compile=("/usr/bin/go", "build", "-o", "main", "{source}"),
    run=("./main",),
    apt=("golang-go",),
    version=("/usr/bin/go", "version"),
    address_space_limit=False,
    compile_address_space_limit=False,
    env={"GOCACHE": "/tmp/go-cache", "GOPATH": "/tmp/go", "GO111MODULE": "off", "GOFLAGS": "-buildvcs=false"},
    aliases=("golang",),
    tests_run_as="go_test",
)
