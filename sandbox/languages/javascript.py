from sandbox.languages import apart
from sandbox.languages.base import Language, literal

# Node's libraries, as pinned in sandbox/runtimes/node (package-lock.json): Jest and React's test libraries
# (sandbox/languages/jest.py) and what programs may require (SandboxFusion's runtime: lodash, js-md5, seedrandom,
# random-seed, commander). Installed by `make languages` with the jest toolchain, read-only under /usr.
NODE_RUNTIME = "/usr/local/lib/reward-sandbox/node"
NODE_MODULES = f"{NODE_RUNTIME}/node_modules"

# A program suite's tests run apart from the program, each in a node of its own (sandbox/languages/apart.py): the
# tests' script is a library (how the tests reach the program's names) that its caller runs (Jest's: jest.py).
SERVE_PROGRAM, TESTS_LIBRARY = apart.scripts("js")
RUN_TESTS = f"{TESTS_LIBRARY}\nrunTests();\n"
NODE = ("/usr/bin/node", "--max-old-space-size={memory_mb}", "--stack-size=65500")

JAVASCRIPT = Language(
    name="javascript",
    source_file="main.js",
    run=(*NODE, "{source}"),
    address_space_limit=False,
    apt=("nodejs:/usr/bin/node",),
    version=("/usr/bin/node", "--version"),
    aliases=("js", "node", "nodejs"),
    env={"NODE_PATH": NODE_MODULES},  # require('lodash') finds the runtime's (where installed)
    tests_done='process.stdout.write("{marker}");',
    apart_program=(*NODE, "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=(*NODE, "-e", literal(RUN_TESTS)),
)
