'use strict'

// `npm run fuzz -- <libFuzzer arguments>`: builds and runs the libFuzzer
// target through `make fuzz`. Without arguments it runs for 60 seconds.
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const args = process.argv.slice(2)
const fuzzArgs = args.length > 0 ? args.join(' ') : '-max_total_time=60'
const result = spawnSync('make', ['-s', 'fuzz', `FUZZ_ARGS=${fuzzArgs}`], {
  cwd: path.join(__dirname, '..'),
  stdio: 'inherit'
})
if (result.error) {
  console.error(`http-oneshot: could not run make: ${result.error.message}`)
  process.exit(1)
}
process.exit(result.status ?? 1)
