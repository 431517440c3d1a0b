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
// npm's `nodedir` setting, and node-gyp always gets them as --nodedir: it is
// never allowed to download them. When neither exists, or a tool the build
// needs is missing, node-gyp does not run at all.
//
// A failure prints one plain line and removes the half-made build/. npm 7 and
// later show an install script's output only when the script fails or with
// --foreground-scripts, so the same reason also reaches the application: its
// install() warns with code HTTP_ONESHOT_INACTIVE (lib/index.js).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..')

// Returns true when an addon for this Node already loads from prebuilds/ or
// build/, the same lookup lib/binding.js does at run time.
function alreadyBuilt (root) {
  try {
    require('node-gyp-build')(root)
    return true
  } catch {
    return false
  }
}

// A directory node-gyp accepts as --nodedir: an install prefix with
// include/node/, or a Node source tree with src/.
function hasHeaders (dir) {
  return fs.existsSync(path.join(dir, 'include', 'node', 'node_api.h')) ||
    fs.existsSync(path.join(dir, 'src', 'node_api.h'))
}

/**
 * Finds Node's headers without the network: next to the running binary in a
 * standard install (`/usr/bin/node` -> `/usr/include/node/node_api.h`), else
 * npm's `nodedir` setting, which npm passes to scripts as npm_config_nodedir.
 * @param {string} execPath the node binary the addon is built for
 * @param {NodeJS.ProcessEnv} env
 * @returns {string|null} the directory for --nodedir, or null
 */
function findNodedir (execPath, env) {
  const prefix = path.resolve(path.dirname(execPath), '..')
  if (hasHeaders(prefix)) return prefix
  const configured = env.npm_config_nodedir
  if (configured && hasHeaders(path.resolve(configured))) return path.resolve(configured)
  return null
}

// Returns true when `name` (a bare command or a path) can be run.
function onPath (name, env) {
  if (name.includes(path.sep)) return fs.existsSync(name)
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, name))) return true
  }
  return false
}

/**
 * Names a tool node-gyp needs that cannot be found, with the Debian package
 * that provides it, or returns null. Only checked where node-gyp runs make.
 * @param {NodeJS.ProcessEnv} env
 * @returns {string|null}
 */
function missingTool (env) {
  if (process.platform === 'win32' || process.platform === 'darwin') return null
  const cc = (env.CC || 'cc').split(' ')[0]
  if (!onPath(cc, env)) return `no C compiler (${cc}) on PATH (Debian: apt-get install gcc)`
  if (!onPath('make', env)) return 'no make on PATH (Debian: apt-get install make)'
  const python = env.PYTHON || env.npm_config_python || 'python3'
  if (!onPath(python, env)) return `no ${python} on PATH (Debian: apt-get install python3)`
  return null
}

// Returns [command, argsPrefix] for the node-gyp to run: the project's own
// copy first (run with this Node), then one on PATH.
function findNodeGyp (root) {
  try {
    const gyp = require.resolve('node-gyp/bin/node-gyp.js', { paths: [root, ROOT] })
    return [process.execPath, [gyp]]
  } catch {}
  return [process.platform === 'win32' ? 'node-gyp.cmd' : 'node-gyp', []]
}

// The most telling line of node-gyp's output: the compiler's first error,
// else node-gyp's own.
function failureLine (output) {
  const lines = output.split('\n').map((line) => line.trim())
  const line = lines.find((l) => /\berror\b:/i.test(l) && !l.startsWith('gyp ')) ||
    lines.find((l) => /^gyp ERR! stack Error: /.test(l)) ||
    lines.find((l) => /^gyp ERR! /.test(l))
  if (line === undefined) return ''
  return line.replace(/^gyp ERR! (stack )?/, '').slice(0, 200)
}

/**
 * Builds (or, with ifNeeded, maybe skips) the addon.
 * @param {object} [opts]
 * @param {boolean} [opts.ifNeeded] the install script: skip when an addon
 *   loads, never fail
 * @param {string} [opts.root] the package directory
 * @param {string} [opts.execPath] the node binary to build for
 * @param {NodeJS.ProcessEnv} [opts.env]
 * @param {(line: string) => void} [opts.log] where the one failure line goes
 * @returns {number} the exit code
 */
function main (opts = {}) {
  const {
    ifNeeded = false,
    root = ROOT,
    execPath = process.execPath,
    env = process.env,
    log = (line) => process.stderr.write(line + '\n')
  } = opts
  if (ifNeeded && alreadyBuilt(root)) return 0

  const fail = (why) => {
    if (ifNeeded) {
      log(`http-oneshot: native addon not built (${why}); using the JS fallback, which sends the same bytes`)
      return 0
    }
    log(`http-oneshot: native build failed (${why})`)
    return 1
  }

  const nodedir = findNodedir(execPath, env)
  if (nodedir === null) {
    return fail(`no Node headers: neither ${path.resolve(path.dirname(execPath), '..', 'include', 'node')} ` +
      'nor an npm nodedir setting has node_api.h, and they are never downloaded')
  }
  const missing = missingTool(env)
  if (missing !== null) return fail(missing)

  const [cmd, prefix] = findNodeGyp(root)
  const args = [...prefix, 'rebuild', `--nodedir=${nodedir}`]
  // The install script keeps node-gyp's output for the one failure line;
  // `npm run build` shows it as it comes.
  const res = spawnSync(cmd, args, {
    cwd: root,
    env,
    stdio: ifNeeded ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    // A Windows .cmd shim must go through the shell to run at all.
    shell: process.platform === 'win32' && cmd.endsWith('.cmd')
  })
  if (res.status === 0) return 0

  fs.rmSync(path.join(root, 'build'), { recursive: true, force: true })
  const exit = res.error ? res.error.message : `node-gyp exited with ${res.status ?? res.signal}`
  const detail = ifNeeded ? failureLine((res.stderr || '') + '\n' + (res.stdout || '')) : ''
  return fail(detail ? `${exit}: ${detail}` : exit)
}

if (require.main === module) {
  process.exitCode = main({ ifNeeded: process.argv.includes('--if-needed') })
}

module.exports = { main, findNodedir, missingTool }
