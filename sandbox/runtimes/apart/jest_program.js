// The program's process of a Jest suite run apart from its tests (sandbox/languages/jest.py; before
// serve_program.js; after jest_globals.js). The program's own tests count for nothing: here Jest's globals, and `@jest/globals`, take them
// and run nothing.
const judgeNothing = new Proxy(function () {}, {
  get: (_, key) => (key === 'then' || typeof key === 'symbol' ? undefined : judgeNothing),
  apply: () => judgeNothing,
});
const judgeJestGlobals = {};
for (const name of JEST_GLOBALS) judgeJestGlobals[name] = globalThis[name] = judgeNothing;
const judgeModule = require('node:module');
const judgeLoad = judgeModule._load;
judgeModule._load = function (request, ...rest) {
  return request === '@jest/globals' ? judgeJestGlobals : judgeLoad.call(this, request, ...rest);
};
