// The tests' process of a Jest suite run apart from the program (sandbox/languages/jest.py; after plain_data.js,
// run_tests.js and jest_globals.js). Jest runs the reference's tests, read on stdin and handed to it from memory
// (jest_transform.js), in its own realm, where the names the tests use that the program defines are stubs asking the
// program's process: run_tests.js's, compiled in that realm, so that what they return and throw is that realm's own.
// Everything Jest loads comes from read-only directories (its files, the runtime's modules); its cache goes to a
// fresh directory, is never read, and holds nothing of the tests (jest_transform.js). Says on fd 5 that the tests
// ran, then which passed.

// A value read in another realm as this realm's own (Jest's toThrow(RangeError) and toBeInstanceOf(Array) compare
// constructors). Compiled in the tests' realm by its source (prelude): it names nothing outside itself.
function here(value, seen = new Map()) {
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return seen.get(value);
  const kind = Object.prototype.toString.call(value).slice(8, -1);
  if (kind === 'Date') return new Date(value.getTime());
  if (kind === 'RegExp') return new RegExp(value.source, value.flags);
  if (kind === 'Error') return new (globalThis[value.name] ?? Error)(value.message);
  if (ArrayBuffer.isView(value) && typeof globalThis[kind] === 'function') return new globalThis[kind](value);
  const copy = Array.isArray(value) ? [] : kind === 'Map' ? new Map() : kind === 'Set' ? new Set() : {};
  seen.set(value, copy);
  if (kind === 'Map') for (const [key, item] of value) copy.set(here(key, seen), here(item, seen));
  else if (kind === 'Set') for (const item of value) copy.add(here(item, seen));
  else for (const key of Object.keys(value)) copy[key] = here(value[key], seen);
  return copy;
}

// Put before the tests' code, in their realm: the program's names, each a value or a stub made there.
function prelude(names) {
  return `const [${names.join(', ')}] = ((bridge) => {
  const ERRORS = {Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError};
  ${here}
  const ask = (request) => here(bridge.ask(request));
  ${copyBack}
  ${stub}
  return bridge.definitions.map((definition, index) => (definition?.function ? stub(bridge.names[index]) : here(definition?.value)));
})(globalThis.judgeBridge);\n`;
}

async function runJest() {
  const env = process.env, source = fs.readFileSync(0, 'utf8');
  const [names, definitions] = programDefinitions(erasedTypes(source), new Set([...NODE_NAMES, ...JEST_GLOBALS]));
  globalThis.judgeBridge = {names, definitions, ask, tests: ''};  // `tests`: their compiled code (jest_transform.js)
  globalThis.judgeTests = prelude(names) + source;
  const root = require('node:path').dirname(env.JUDGE_JEST_TESTS);
  process.chdir(root);  // nothing is looked up where the program writes
  const config = {
    rootDir: root, roots: [root], testMatch: [env.JUDGE_JEST_TESTS], modulePaths: [env.JUDGE_NODE_MODULES],
    testEnvironment: env.JUDGE_JEST_ENVIRONMENT, transform: {'\\.[jt]sx?$': env.JUDGE_JEST_TRANSFORM},
    cache: false, cacheDirectory: fs.mkdtempSync('/tmp/jest-'), watchman: false,
  };
  const {runCLI} = require(`${env.JUDGE_NODE_MODULES}/jest`);
  const argv = {config: JSON.stringify(config), runInBand: true, ci: true, verbose: true, color: false, _: [], $0: 'jest'};
  const {results} = await runCLI(argv, [root]);
  const tests = results.testResults.flatMap((file) => file.testResults);
  const reported = tests.filter((t) => t.status === 'passed' || t.status === 'failed');
  const lines = reported.map((t) => `  ${t.status === 'passed' ? '✓' : '✕'} ${t.title}\n`);
  const passed = results.numTotalTests > 0 && results.numPassedTests === results.numTotalTests &&
    results.testResults.every((file) => !file.testExecError && !file.failureMessage);
  fs.writeSync(SAID, `done\n${lines.join('')}`);
  process.exit(passed ? 0 : 1);
}

runJest().catch((error) => {
  console.error(error);
  process.exit(1);
});
