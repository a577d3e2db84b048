// Jest's transform of a suite run apart from the program (run_jest.js): the tests' code, from memory, in place of the
// empty file Jest was asked to run (JUDGE_JEST_TESTS); Babel as sandbox/languages/jest.py configures it, reading no
// configuration file (a babel.config.js in the working directory would be the program's). Jest writes what a
// transform returns to its cache, in /tmp, where the program could read it: for the tests, that is only a line that
// evaluates their compiled code, which stays in memory (the bridge's `tests`).
const NODE_MODULES = process.env.JUDGE_NODE_MODULES;
const babelJest = require(`${NODE_MODULES}/babel-jest`).default;

const presets = [
  [`${NODE_MODULES}/@babel/preset-env`, {targets: {node: 'current'}}],
  `${NODE_MODULES}/@babel/preset-typescript`,
];
const babel = babelJest.createTransformer({presets, babelrc: false, configFile: false, cwd: __dirname, root: __dirname});

module.exports = {
  process(source, file, options) {
    if (file !== process.env.JUDGE_JEST_TESTS) return babel.process(source, file, options);
    globalThis.judgeBridge.tests = babel.process(globalThis.judgeTests, file, options).code;
    return {code: 'eval(judgeBridge.tests);\n'};  // a direct eval: the module's require, exports and jest in scope
  },
};
