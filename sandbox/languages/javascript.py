from pathlib import Path

from sandbox.languages.base import Language, literal

# Node's libraries, as pinned in sandbox/runtimes/node (package-lock.json): Jest and React's test libraries
# (sandbox/languages/jest.py) and what programs may require (SandboxFusion's runtime: lodash, js-md5, seedrandom,
# random-seed, commander). Installed by `make languages` with the jest toolchain, read-only under /usr.
NODE_RUNTIME = "/usr/local/lib/reward-sandbox/node"
NODE_MODULES = f"{NODE_RUNTIME}/node_modules"

# A program suite's tests run apart from the program (sandbox/runner.py run_suite_apart): the tests in a node of their
# own, made non-dumpable before it starts by a preloaded library built at setup, the program in another.
APART = Path(__file__).resolve().parent.parent / "runtimes" / "apart"
NONDUMPABLE = "/usr/local/lib/reward-sandbox/nondumpable.so"
BUILD_NONDUMPABLE = (
    "mkdir -p /usr/local/lib/reward-sandbox && "
    f"gcc -O2 -shared -fPIC -o {NONDUMPABLE} sandbox/runtimes/apart/nondumpable.c"
)
_PLAIN_DATA = (APART / "plain_data.js").read_text()
SERVE_PROGRAM = _PLAIN_DATA + (APART / "serve_program.js").read_text()
RUN_TESTS = _PLAIN_DATA + (APART / "run_tests.js").read_text()
NODE = ("/usr/bin/node", "--max-old-space-size={memory_mb}", "--stack-size=65500")

JAVASCRIPT = Language(
    name="javascript",
    source_file="main.js",
    run=(*NODE, "{source}"),
    address_space_limit=False,
    apt=("nodejs:/usr/bin/node", "gcc:/usr/bin/gcc"),
    version=("/usr/bin/node", "--version"),
    aliases=("js", "node", "nodejs"),
    env={"NODE_PATH": NODE_MODULES},  # require('lodash') finds the runtime's (where installed)
    tests_done='process.stdout.write("{marker}");',
    apart_program=(*NODE, "-e", literal(SERVE_PROGRAM), "{source}"),
    apart_tests=(*NODE, "-e", literal(RUN_TESTS)),
    # HOME: node looks for modules under $HOME/.node_modules, which the program could write in /sandbox.
    apart_tests_env={"LD_PRELOAD": NONDUMPABLE, "HOME": "/usr/lib/judge"},
    needs=(NONDUMPABLE,),
    setup=(BUILD_NONDUMPABLE,),
)
