import json

from sandbox.languages.base import Language, literal
from sandbox.languages.javascript import JAVASCRIPT, NODE_MODULES, NODE_RUNTIME


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
# SandboxFusion's `jest`: the program is a test file (TypeScript or JavaScript) with its describe/test blocks.
JEST = Language(name="jest", source_file="main.test.ts", run=_jest("node"), **_COMMON)
# `react`: the same with JSX, a DOM (jsdom), React 18, Testing Library and react-test-renderer.
REACT = Language(name="react", source_file="main.test.tsx", run=_jest("jsdom"), **_COMMON)
