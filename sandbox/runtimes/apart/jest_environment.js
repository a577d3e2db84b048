// The environment of a Jest suite's tests run apart from the program (run_jest.js): node's, with the bridge by which
// the stubs made in the tests' realm reach the program's process.
const {TestEnvironment} = require(`${process.env.JUDGE_NODE_MODULES}/jest-environment-node`);

module.exports = class JudgeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.judgeBridge = globalThis.judgeBridge;
  }
};
