'use strict'

// The declarations against the modules they describe: every export of
// lib/index.js and lib/index.mjs is declared (index.d.ts, index.d.mts) and
// nothing else is, the preload declares no exports, and FALLBACK's declared
// keys and values are lib/decide.js's. `npm run test:types` checks that the
// declarations catch mistakes; this checks that they tell the truth.

const fs = require('node:fs')
const path = require('node:path')

const t = require('tap')
const ts = require('typescript')

const ROOT = path.join(__dirname, '..')

const program = ts.createProgram([
  path.join(ROOT, 'index.d.ts'),
  path.join(ROOT, 'index.d.mts'),
  path.join(ROOT, 'register.d.ts')
], { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ['node'] })
const checker = program.getTypeChecker()

function moduleSymbol (file) {
  const source = program.getSourceFile(path.join(ROOT, file))
  return checker.getSymbolAtLocation(source)
}

// The names a declaration file exports as values (types and interfaces
// have no run-time counterpart).
function declaredValues (file) {
  return checker.getExportsOfModule(moduleSymbol(file))
    .filter((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      return (target.flags & ts.SymbolFlags.Value) !== 0
    })
    .map((symbol) => symbol.name)
    .sort()
}

t.test('diagnostics: the declarations compile', async (t) => {
  const diagnostics = ts.getPreEmitDiagnostics(program)
  t.strictSame(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [])
})

t.test('index.d.ts declares every export of lib/index.js', async (t) => {
  const runtime = Object.keys(require('../lib/index.js')).sort()
  t.strictSame(declaredValues('index.d.ts'), runtime)
})

t.test('index.d.mts declares every export of lib/index.mjs', async (t) => {
  const runtime = Object.keys(await import('../lib/index.mjs')).sort()
  t.strictSame(declaredValues('index.d.mts'), runtime)
})

// Read, not loaded: loading the preload would hook this process.
t.test('register.d.ts declares no exports, and the preload has none', async (t) => {
  t.strictSame(declaredValues('register.d.ts'), [])
  const esm = ts.createSourceFile('register.mjs',
    fs.readFileSync(path.join(ROOT, 'register.mjs'), 'utf8'), ts.ScriptTarget.Latest)
  const exported = esm.statements.filter((node) => ts.isExportDeclaration(node) ||
    ts.isExportAssignment(node) ||
    (ts.canHaveModifiers(node) && (ts.getModifiers(node) || []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)))
  t.equal(exported.length, 0, 'register.mjs exports nothing')
  const cjs = fs.readFileSync(path.join(ROOT, 'register.js'), 'utf8')
  t.notMatch(cjs, /\bexports\b/, 'register.js exports nothing')
})

t.test('FALLBACK: the declared keys and values are the run-time ones', async (t) => {
  const { FALLBACK } = require('../lib/rules.js')
  const symbol = checker.getExportsOfModule(moduleSymbol('index.d.ts'))
    .find((s) => s.name === 'FALLBACK')
  const type = checker.getTypeOfSymbol(symbol)
  const declared = {}
  for (const property of type.getProperties()) {
    const value = checker.getTypeOfSymbol(property)
    t.ok(value.isStringLiteral(), `${property.name} is a string literal type`)
    t.ok(property.declarations.every((d) => ts.getCombinedModifierFlags(d) & ts.ModifierFlags.Readonly),
      `${property.name} is readonly`)
    declared[property.name] = value.value
  }
  t.strictSame(declared, { ...FALLBACK })
  t.ok(Object.isFrozen(FALLBACK), 'and the run-time object is frozen')
})
