from sandbox.languages.base import Language, literal
from sandbox.languages.javascript import JAVASCRIPT, NODE_MODULES, SERVE_PROGRAM

# Types are erased, not checked, as SandboxFusion's tsx runs TypeScript (code that uses `require` or `process`
# without type declarations runs); a syntax error is a compile error. Debian's TypeScript, in /usr/share/nodejs.
_TRANSPILE = """
const ts = require('typescript'), fs = require('fs');
const out = ts.transpileModule(fs.readFileSync(process.argv[1], 'utf8'), {
  fileName: process.argv[1], reportDiagnostics: true,
  compilerOptions: {module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true},
});
const errors = out.diagnostics.filter(d => d.category === ts.DiagnosticCategory.Error);
for (const d of errors) {
  const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
  const where = at ? `${process.argv[1]}(${at.line + 1},${at.character + 1})` : process.argv[1];
  console.error(`${where}: error TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\\n')}`);
}
if (errors.length) process.exit(1);
fs.writeFileSync('main.js', out.outputText);
"""

TYPESCRIPT = Language(
    name="typescript",
    source_file="main.ts",
    compile=("/usr/bin/node", "-e", literal(_TRANSPILE), "{source}"),
    run=(*JAVASCRIPT.run[:-1], "main.js"),
    address_space_limit=False,
    compile_address_space_limit=False,
    env={"NODE_PATH": f"{NODE_MODULES}:/usr/share/nodejs"},  # the programs' libraries (javascript.py), tsc's
    apt=(*JAVASCRIPT.apt, "node-typescript"),
    version=("/usr/bin/node", "-e", "console.log('typescript ' + require('/usr/share/nodejs/typescript').version)"),
    aliases=("ts",),
    tests_done='process.stdout.write("{marker}");',
    # Apart from the program as JavaScript's (sandbox/languages/javascript.py), the tests' types erased in their node.
    apart_program=(*JAVASCRIPT.run[:-1], "-e", literal(SERVE_PROGRAM), "main.js"),
    apart_tests=JAVASCRIPT.apart_tests,
    apart_tests_env={"JUDGE_TYPESCRIPT": "/usr/share/nodejs/typescript"},
    needs=("/usr/share/nodejs/typescript/package.json",),
)
