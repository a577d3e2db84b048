// The tests' process of a JavaScript program suite run apart from the program (sandbox/runner.py run_suite_apart;
// after plain_data.js). It reads the tests' code on stdin and runs it; the names the tests use and do not declare
// themselves (nor find in node) are the program's: asked for on fd 4, answered on fd 3, its functions called there.
// Modules come from node and the runtime's read-only libraries, never from a directory the program can write. Says
// on fd 5 that the tests all ran.
const Module = require('node:module');
const vm = require('node:vm');

const REPLIES = 3, REQUESTS = 4, SAID = 5;
const TESTS_FILE = '/usr/lib/judge/tests.js';  // not a file: where the tests' require resolves from (read-only)
const ERRORS = {Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError};
const NODE_NAMES = new Set(['require', 'module', 'exports', '__filename', '__dirname']);

function ask(request) {
  send(REQUESTS, request);
  const reply = receive(REPLIES);
  if (reply === null || typeof reply !== 'object') throw new Error('the program ended before its tests did');
  return reply;
}

// The program's names among those the tests use without declaring them (nor finding them in node or `ignored`):
// (names, what the program says of each: {function: true} or {value}).
function programDefinitions(code, ignored = NODE_NAMES) {
  const declared = new Set([...code.matchAll(/\b(?:var|let|const|function\*?|class)\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1]));
  const used = new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? []);
  const wanted = [...used].filter((name) => !declared.has(name) && !ignored.has(name) && !(name in globalThis) && bindable(name));
  const defined = ask({names: wanted}).defined ?? {};
  const names = wanted.filter((name) => Object.hasOwn(defined, name));
  return [names, names.map((name) => defined[name])];
}

// Whether `name` can name a binding (not `true`, `this` or `typeof`).
function bindable(name) {
  try {
    new Function(`let ${name};`);
    return true;
  } catch {
    return false;
  }
}

// The program's names the tests use: (names, values), a function as a stub.
function programNames(code) {
  const [names, definitions] = programDefinitions(code);
  return [names, definitions.map((definition, index) => (definition?.function ? stub(names[index]) : definition?.value))];
}

// An async function's stub returns a promise of what the program's promise settled to.
function stub(name) {
  return function (...args) {
    const reply = ask({call: name, args});
    if (reply.error) {
      const error = new (ERRORS[reply.error.name] ?? Error)(String(reply.error.message));
      error.stack = `${error.name}: ${error.message}\n  in the program: ${String(reply.error.stack ?? '')}`;
      if (reply.promise) return Promise.reject(error);
      throw error;
    }
    copyBack(args, reply.args);
    return reply.promise ? Promise.resolve(reply.value) : reply.value;
  };
}

// Arrays and plain objects the function changed in place, changed so here too.
function copyBack(args, changed) {
  if (!Array.isArray(changed) || changed.length !== args.length) return;
  args.forEach((arg, index) => {
    const now = changed[index];
    if (Array.isArray(arg) && Array.isArray(now)) arg.splice(0, arg.length, ...now);
    else if (arg && now && typeof arg === 'object' && typeof now === 'object' && Object.getPrototypeOf(arg) === Object.prototype) {
      for (const key of Object.keys(arg)) delete arg[key];
      Object.assign(arg, now);
    }
  });
}

// TypeScript tests (JUDGE_TYPESCRIPT: the compiler's module) with their types erased, as the program's were.
function erasedTypes(code) {
  const ts = require(process.env.JUDGE_TYPESCRIPT);
  const out = ts.transpileModule(code, {
    fileName: 'tests.ts', reportDiagnostics: true,
    compilerOptions: {module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true},
  });
  const error = out.diagnostics.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (error) throw new SyntaxError(`the tests: TS${error.code}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  return out.outputText;
}

// HumanEval-X's tests check with console.assert, which only prints when a check fails: here a failed check fails.
console.assert = (value, ...message) => {
  if (!value) throw new Error(['Assertion failed', ...message].join(': '));
};

function runTests() {
  const source = fs.readFileSync(0, 'utf8');
  const code = process.env.JUDGE_TYPESCRIPT ? erasedTypes(source) : source;
  const [names, values] = programNames(code);
  // The program's names outside, node's inside: the tests' own declarations shadow either.
  const wrapped = `return function (${[...NODE_NAMES].join(', ')}) {\n${code}\n};`;
  const tests = vm.compileFunction(wrapped, names, {filename: TESTS_FILE})(...values);
  const testsModule = new Module(TESTS_FILE, null);
  testsModule.filename = TESTS_FILE;
  testsModule.paths = Module._nodeModulePaths('/usr/lib/judge');
  const testsRequire = Module.createRequire(TESTS_FILE);
  process.once('beforeExit', () => {
    if (!process.exitCode) fs.writeSync(SAID, 'done');
  });
  tests(testsRequire, testsModule, testsModule.exports, TESTS_FILE, '/usr/lib/judge');
}
