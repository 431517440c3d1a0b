'use strict'

// What the tests of the probe's stored answer (lib/protocol/cache.js) share:
// a scratch cache directory per test, a child Node started without the
// variables that would change what it does, and the names of its output.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const cache = require('../../lib/protocol/cache.js')

// Variables the parent may have that a child must not inherit unless the
// test sets them itself.
const CLEARED = ['NODE_OPTIONS', 'NODE_DEBUG', 'HTTP_ONESHOT', 'HTTP_ONESHOT_NATIVE', 'HTTP_ONESHOT_PROBE',
  'HTTP_ONESHOT_REPORT']

// NODE_DEBUG=http-oneshot's line naming where the probe ran.
const PROBED = /\(probed in a child process\)/
const STORED = /\(probed in a child process, answer stored\)/

/**
 * A scratch directory under the system's tmpdir, removed when the test
 * ends, and a function making empty cache directories inside it.
 * @param {import('tap').Test} t
 * @param {string} prefix
 * @returns {{ dir: string, emptyCache: () => string }}
 */
function cacheDirs (t, prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return { dir, emptyCache: () => fs.mkdtempSync(path.join(dir, 'cache-')) }
}

function childEnv (env) {
  const out = { ...process.env, ...env }
  for (const key of CLEARED) {
    if (!(key in env)) delete out[key]
  }
  return out
}

/**
 * Runs this Node with `args`; throws with its stderr unless it exits 0.
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env set on top of a cleared environment
 */
function node (args, env) {
  const res = childProcess.spawnSync(process.execPath, args, { env: childEnv(env), encoding: 'utf8', timeout: 30000 })
  if (res.status !== 0) throw new Error(`child failed (${res.status} ${res.signal}): ${res.stderr}`)
  return res
}

function lastJSON (stdout) {
  return JSON.parse(stdout.trim().split('\n').pop())
}

// The file of this binary's entry in `cacheDir`, and its key.
function entryFile (cacheDir) {
  const key = cache.binaryKey()
  return { key, file: path.join(cacheDir, `probe-${cache.hash(key)}.json`) }
}

module.exports = { PROBED, STORED, cacheDirs, node, lastJSON, entryFile }
