import json

from sandbox.languages import apart, jest_apart
from sandbox.languages.base import Language, literal
from sandbox.languages.javascript import JAVASCRIPT, NODE_MODULES, NODE_RUNTIME, SERVE_PROGRAM, TESTS_LIBRARY
from sandbox.languages.typescript import TYPESCRIPT


def _config(environment: str) -> str:
    """Jest's configuration: Babel strips TypeScript and compiles JSX (as SandboxFusion's babel.config.js does, plus
    React); modules resolve from the runtime; one process (--runInBand), its cache in the sandbox's /tmp."""
    presets = [
        [f"{NODE_MODULES}/@babel/preset-env", {"targets": {"node": "current"}}],
        [f"{NODE_MODULES}/@babel/preset-react", {"runtime": "automatic"}],
        f"{NODE_MODULES}/@babel/preset-typescript",
    ]
    return json.dumps({
        "testEnvironment": environment,
        "modulePaths": [NODE_MODULES],
        "transform": {r"\.[jt]sx?$": [f"{NODE_MODULES}/babel-jest", {"presets": presets}]},
        "cacheDirectory": "/tmp/jest-cache",
    })  # fmt: skip


def _jest(environment: str) -> tuple[str, ...]:
    return (
        *JAVASCRIPT.run[:-1], f"{NODE_MODULES}/jest/bin/jest.js", "--config", literal(_config(environment)),
        "--runInBand", "--no-watchman", "--ci", "--verbose", "--color=false",
    )  # fmt: skip


_COMMON = {
    "address_space_limit": False,
    "apt": (*JAVASCRIPT.apt, "npm:/usr/bin/npm"),
    "setup": (
        f"mkdir -p {NODE_RUNTIME} && cp sandbox/runtimes/node/package.json sandbox/runtimes/node/package-lock.json "
        f"{NODE_RUNTIME}/ && cd {NODE_RUNTIME} && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error",
    ),
    # The programs' libraries too: a runtime installed before they were pinned is installed again.
    "needs": tuple(f"{NODE_MODULES}/{path}" for path in ("jest/bin/jest.js", "lodash/lodash.js", "js-md5/src")),
    "version": ("/usr/bin/node", f"{NODE_MODULES}/jest/bin/jest.js", "--version"),
    "start_s": 1.5,
    "report": "jest",
}
# A program suite's Jest tests run apart from the program (sandbox/runtimes/apart/run_jest.js): the program, its
# types erased as TypeScript's are, served as JavaScript's (its own describe/test blocks taken and never run:
# jest_program.js); Jest in the tests' node, which loads its environment and transform from files `make languages`
# installs, and runs the tests from memory in place of an empty file of theirs.
_ENVIRONMENT, _TRANSFORM = (
    apart.built_from(apart.APART / f"jest_{name}.js", f"jest-{name}", ".js") for name in ("environment", "transform")
)
_EMPTY_TESTS = f"{apart.BUILT}/jest-tests/tests.test.ts"
_INSTALL = (
    f"mkdir -p {apart.BUILT}/jest-tests && : > {_EMPTY_TESTS} && "
    f"cp {apart.from_root(apart.APART / 'jest_environment.js')} {_ENVIRONMENT} && "
    f"cp {apart.from_root(apart.APART / 'jest_transform.js')} {_TRANSFORM}"
)
_GLOBALS, _PROGRAM, _RUN = (
    (apart.APART / f"{name}.js").read_text() for name in ("jest_globals", "jest_program", "run_jest")
)
_PROGRAM_SIDE = _GLOBALS + _PROGRAM + SERVE_PROGRAM
_TESTS_SIDE = TESTS_LIBRARY + _GLOBALS + _RUN

# SandboxFusion's `jest`: the program is a test file (TypeScript or JavaScript) with its describe/test blocks.
JEST = Language(
    name="jest",
    source_file="main.test.ts",
    run=_jest("node"),
    **_COMMON | {
        "apt": (*_COMMON["apt"], "node-typescript"),
        "setup": (*_COMMON["setup"], _INSTALL),
        "needs": (*_COMMON["needs"], *TYPESCRIPT.needs, _ENVIRONMENT, _TRANSFORM, _EMPTY_TESTS),
    },
    env=TYPESCRIPT.env,
    compile_address_space_limit=False,
    apart_when=jest_apart.runs_apart,
    apart_compile=TYPESCRIPT.compile,
    apart_program=(*JAVASCRIPT.run[:-1], "-e", literal(_PROGRAM_SIDE), "main.js"),
    apart_tests=(*JAVASCRIPT.run[:-1], "-e", literal(_TESTS_SIDE)),
    apart_tests_env={
        "JUDGE_NODE_MODULES": NODE_MODULES, "JUDGE_TYPESCRIPT": TYPESCRIPT.apart_tests_env["JUDGE_TYPESCRIPT"],
        "JUDGE_JEST_TESTS": _EMPTY_TESTS, "JUDGE_JEST_ENVIRONMENT": _ENVIRONMENT, "JUDGE_JEST_TRANSFORM": _TRANSFORM,
    },
)  # fmt: skip
# `react`: the same with JSX, a DOM (jsdom), React 18, Testing Library and react-test-renderer.
REACT = Language(name="react", source_file="main.test.tsx", run=_jest("jsdom"), **_COMMON)
