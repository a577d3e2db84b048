// The program's process of a JavaScript program suite run apart from its tests (sandbox/runner.py run_suite_apart;
// after plain_data.js): the program runs as the main module, then answers the tests' requests on fd 3 with replies
// on fd 4 until the tests' process is done. What it finds by a name, returns or throws goes back as plain data.
const path = require('node:path');
const Module = require('node:module');

const REQUESTS = 3, REPLIES = 4;

// Runs the program as node runs a main module; returns its scope: a name -> the value it has there.
function load(file) {
  const program = new Module(file, null);
  program.filename = file;
  program.paths = Module._nodeModulePaths(path.dirname(file));
  process.mainModule = program;
  const source = fs.readFileSync(file, 'utf8');
  program._compile(`${source}\n;module.judgeScope = (name) => eval(name);\n`, file);
  return program.judgeScope;
}

function described(error) {
  try {
    return {name: String(error?.name ?? 'Error'), message: String(error?.message ?? error), stack: String(error?.stack ?? '')};
  } catch {
    return {name: 'Error', message: 'the program threw what cannot be read'};
  }
}

// {names}: which of them the program defines, each a function or a value; {call, args}: the function called (what an
// async function's promise settles to, said to be a promise's).
async function answer(scope, request) {
  if (request.names) {
    const defined = {};
    for (const name of request.names) {
      try {
        const value = scope(name);
        if (value !== undefined) defined[name] = typeof value === 'function' ? {function: true} : {value};
      } catch {}  // not a name of the program's
    }
    return {defined};
  }
  let promise = false;
  try {
    const value = scope(request.call)(...request.args);
    promise = value instanceof Promise;
    return {value: promise ? await value : value, args: request.args, promise};
  } catch (error) {
    return {error: described(error), promise};
  }
}

async function serve(scope) {
  for (let request; (request = receive(REQUESTS)) !== null; ) {
    const reply = await answer(scope, request);
    try {
      send(REPLIES, reply);
    } catch (error) {  // not plain data: a function, a symbol
      send(REPLIES, {error: {name: 'TypeError', message: `the program answered with what is not plain data: ${described(error).message}`}});
    }
  }
}

serve(load(path.resolve(process.argv[1])));
