'use strict'

// `npm run fuzz -- <libFuzzer arguments>`: builds and runs the libFuzzer
// target through `make fuzz`. Without arguments it runs for 60 seconds.
// Before make runs, it checks for the system packages the target needs
// (Debian names) and names the missing ones instead of failing inside make.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

/**
 * The Debian packages `make fuzz` needs that are not installed, as
 * [package, what is missing] pairs.
 * @param {NodeJS.ProcessEnv} env CLANG, LLHTTP_DIR and PATH are read
 * @returns {Array<[string, string]>}
 */
function missingPackages (env = process.env) {
  const missing = []
  const clang = env.CLANG || 'clang'
  const version = spawnSync(clang, ['-print-resource-dir'], { encoding: 'utf8', env })
  if (version.error || version.status !== 0) {
    missing.push(['clang', `${clang} is not on PATH`])
  } else {
    // The fuzzer runtime ships apart from clang itself on Debian.
    const dir = path.join(version.stdout.trim(), 'lib', 'linux')
    const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch] || process.arch
    if (!fs.existsSync(path.join(dir, `libclang_rt.fuzzer-${arch}.a`))) {
      const major = (version.stdout.match(/clang\/(\d+)/) || [])[1] || 'N'
      missing.push([`libclang-rt-${major}-dev`, `no libFuzzer runtime in ${dir}`])
    }
  }
  const llhttp = env.LLHTTP_DIR || '/usr/share/llhttp'
  if (!fs.existsSync(path.join(llhttp, 'llhttp.c'))) {
    missing.push(['node-llhttp', `no llhttp C sources in ${llhttp}`])
  }
  const make = spawnSync('make', ['--version'], { env })
  if (make.error) missing.push(['make', 'make is not on PATH'])
  return missing
}

function main () {
  const missing = missingPackages()
  if (missing.length > 0) {
    for (const [, why] of missing) console.error(`http-oneshot: fuzz: ${why}`)
    console.error(`http-oneshot: fuzz needs: apt-get install ${missing.map(([pkg]) => pkg).join(' ')}`)
    return 1
  }
  const args = process.argv.slice(2)
  const fuzzArgs = args.length > 0 ? args.join(' ') : '-max_total_time=60'
  const result = spawnSync('make', ['-s', 'fuzz', `FUZZ_ARGS=${fuzzArgs}`], {
    cwd: path.join(__dirname, '..'),
    stdio: 'inherit'
  })
  if (result.error) {
    console.error(`http-oneshot: could not run make: ${result.error.message}`)
    return 1
  }
  return result.status ?? 1
}

if (require.main === module) process.exitCode = main()

module.exports = { missingPackages }
