// The globals Jest gives a test file (sandbox/languages/jest.py puts this before jest_program.js and run_jest.js).
const JEST_GLOBALS = [
  'describe', 'fdescribe', 'xdescribe', 'test', 'it', 'fit', 'xit', 'xtest', 'expect', 'jest',
  'beforeAll', 'beforeEach', 'afterAll', 'afterEach',
];
