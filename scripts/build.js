#!/usr/bin/env node
'use strict'

// Builds the addon with node-gyp, offline.
//
//   node scripts/build.js             rebuild; exit non-zero on failure
//   node scripts/build.js --if-needed  (the npm "install" script) do nothing
//                                     when a prebuild or an earlier build
//                                     loads; never fail the install, because
//                                     lib/build.js has a JS fallback
//
// Headers come from the local Node install (`<prefix>/include/node`) or from
// npm's `nodedir` setting; node-gyp is never allowed to download them.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.resolve(__dirname, '..')
const ifNeeded = process.argv.includes('--if-needed')

// Returns true when an addon for this Node already loads from prebuilds/ or
// build/, the same lookup lib/binding.js does at run time.
function alreadyBuilt () {
  try {
    require('node-gyp-build')(root)
    return true
  } catch {
    return false
  }
}

// Returns [command, argsPrefix] for the node-gyp to run: the project's own
// copy first (run with this Node), then one on PATH.
function findNodeGyp () {
  const local = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'node-gyp.cmd' : 'node-gyp')
  try {
    return [process.execPath, [require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] })]]
  } catch {}
  if (fs.existsSync(local)) return [local, []]
  return [process.platform === 'win32' ? 'node-gyp.cmd' : 'node-gyp', []]
}

// The local headers live next to the running binary in a standard install
// (`/usr/bin/node` -> `/usr/include/node/node_api.h`). Passing them as
// --nodedir stops node-gyp from fetching a tarball. Without them we rely on
// npm's `nodedir` config, which npm passes to node-gyp through the env.
function nodedirArgs () {
  const prefix = path.resolve(path.dirname(process.execPath), '..')
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) {
    return [`--nodedir=${prefix}`]
  }
  return []
}

function main () {
  if (ifNeeded && alreadyBuilt()) return 0

  const [cmd, prefix] = findNodeGyp()
  const args = [...prefix, 'rebuild', ...nodedirArgs()]
  const res = spawnSync(cmd, args, {
    cwd: root,
    stdio: 'inherit',
    // A Windows .cmd shim must go through the shell to run at all.
    shell: process.platform === 'win32' && cmd.endsWith('.cmd')
  })

  if (res.status === 0) return 0

  const why = res.error ? res.error.message : `node-gyp exited with ${res.status ?? res.signal}`
  if (ifNeeded) {
    console.warn(`http-oneshot: native build failed (${why}); using the pure JS fallback, which produces the same bytes.`)
    return 0
  }
  console.error(`http-oneshot: native build failed (${why})`)
  return 1
}

process.exitCode = main()
