'use strict'

// Reads the output of `npm test` and prints the plain `N passed, M failed`
// line CI looks for: tap's closing summary (the C
// tests run inside it, through test/core.test.js), plus failed extra steps.
const fs = require('node:fs')

const [file, extra = '0'] = process.argv.slice(2)
const text = fs.readFileSync(file, 'utf8')
let passed = 0
let failed = Number(extra) || 0

// tap closes with `# { total: N, pass: P, fail: F, ... }`.
const summaries = text.match(/^# \{ total: \d+[^}]*\}$/gm) || []
const last = summaries[summaries.length - 1]
if (last) {
  const field = (name) => Number((last.match(new RegExp(name + ': (\\d+)')) || [])[1] || 0)
  passed += field('pass')
  failed += field('fail')
} else {
  failed += 1
}
console.log(`${passed} passed, ${failed} failed`)
