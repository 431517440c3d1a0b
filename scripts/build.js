#!/usr/bin/env node
'use strict'

// Builds the addon with node-gyp, offline.
//
//   node scripts/build.js             rebuild; exit non-zero on failure. Works
//                                     from an installed package too:
//                                     node node_modules/http-oneshot/scripts/build.js
//   node scripts/build.js --if-needed  (the npm "install" script) do nothing
//                                     when a prebuild or an earlier build
//                                     loads; never fail the install: without
//                                     the addon the package stays inactive
//                                     and every response takes Node's own path
//
// A source build can be forced at install time the way node-gyp-build and
// node-pre-gyp users know: `npm install http-oneshot --build-from-source`,
// or npm_config_build_from_source=true in the environment (npm passes both
// to install scripts as npm_config_build_from_source, with a warning that it
// does not know the setting). A forced build that fails fails the install.
//
// Headers come from the local Node install (`<prefix>/include/node`) or from
// npm's `nodedir` setting, and node-gyp always gets them as --nodedir: it is
// never allowed to download them. When neither exists, or a tool the build
// needs is missing, node-gyp does not run at all.
//
// A failure prints one plain line and removes the half-made build/. npm 7 and
// later show an install script's output only when the script fails or with
// --foreground-scripts, so the reason also reaches the application through
// the loader (lib/binding.js, NODE_DEBUG=http-oneshot).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const { prebuiltList } = require('../lib/prebuilds.js')

const ROOT = path.resolve(__dirname, '..')
const NAME = 'http-oneshot'

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

/**
 * Whether npm was asked for a source build: `--build-from-source` or
 * npm_config_build_from_source, set to true or to a comma-separated list of
 * package names that includes this one (node-pre-gyp's convention).
 * @param {NodeJS.ProcessEnv} env
 * @returns {boolean}
 */
function buildFromSource (env) {
  const value = (env.npm_config_build_from_source || '').trim().toLowerCase()
  if (value === '' || value === 'false' || value === '0') return false
  if (value === 'true' || value === '1') return true
  return value.split(',').map((s) => s.trim()).includes(NAME)
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

// node-gyp's entry script inside an npm installation next to `execPath`:
// <prefix>/lib/node_modules/npm on Unix, <dir>/node_modules/npm on Windows.
function npmBundledNodeGyp (execPath) {
  const bin = path.dirname(execPath)
  const npmDir = process.platform === 'win32'
    ? path.join(bin, 'node_modules', 'npm')
    : path.join(bin, '..', 'lib', 'node_modules', 'npm')
  return path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
}

/**
 * The node-gyp to run, as [command, argsPrefix], or null when there is none:
 * 1. npm_config_node_gyp, which npm sets for every script it runs (its own
 *    bundled copy, or the user's `node_gyp` setting);
 * 2. a node-gyp the package can require (the repository's devDependency);
 * 3. the one bundled with the npm next to the running node, for
 *    `node node_modules/http-oneshot/scripts/build.js` outside npm;
 * 4. node-gyp on PATH.
 * A .js entry runs with the running node, so no shebang or PATH is needed.
 * @param {string} root the package directory
 * @param {NodeJS.ProcessEnv} env
 * @returns {[string, string[]]|null}
 */
function findNodeGyp (root, env) {
  const script = (file) => [process.execPath, [file]]
  const configured = env.npm_config_node_gyp
  if (configured && fs.existsSync(configured)) {
    return configured.endsWith('.js') ? script(configured) : [configured, []]
  }
  try {
    return script(require.resolve('node-gyp/bin/node-gyp.js', { paths: [root, ROOT] }))
  } catch {}
  const bundled = npmBundledNodeGyp(process.execPath)
  if (fs.existsSync(bundled)) return script(bundled)
  const bare = process.platform === 'win32' ? 'node-gyp.cmd' : 'node-gyp'
  if (onPath(bare, env)) return [bare, []]
  return null
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

// What the install script says when it could not build: the package stays
// installed but inactive, and how to get the native path.
function inactiveLine (why) {
  return `${NAME}: native addon not built (${why}). ${NAME} stays inactive: every response ` +
    "takes Node's own path. For the native path, install a C toolchain (a C compiler, make, " +
    `python3) and run "npm rebuild ${NAME} --foreground-scripts", or use a platform with a ` +
    `prebuild: ${prebuiltList()}`
}

/**
 * Builds (or, with ifNeeded, maybe skips) the addon.
 * @param {object} [opts]
 * @param {boolean} [opts.ifNeeded] the install script: skip when an addon
 *   loads unless a source build was asked for; never fail unless it was
 * @param {string} [opts.root] the package directory
 * @param {string} [opts.execPath] the node binary to build for
 * @param {string} [opts.arch] a target architecture for node-gyp --arch
 *   (a cross build: env must name the cross compiler as CC)
 * @param {NodeJS.ProcessEnv} [opts.env]
 * @param {(line: string) => void} [opts.log] where the one failure line goes
 * @returns {number} the exit code
 */
function main (opts = {}) {
  const {
    ifNeeded = false,
    root = ROOT,
    execPath = process.execPath,
    arch = null,
    env = process.env,
    log = (line) => process.stderr.write(line + '\n')
  } = opts
  const forced = ifNeeded && buildFromSource(env)
  if (ifNeeded && !forced && alreadyBuilt(root)) return 0

  const fail = (why) => {
    if (forced) {
      log(`${NAME}: source build failed (${why}); it was asked for with --build-from-source ` +
        '(npm_config_build_from_source), so the install fails')
      return 1
    }
    if (ifNeeded) {
      log(inactiveLine(why))
      return 0
    }
    log(`${NAME}: native build failed (${why})`)
    return 1
  }

  const nodedir = findNodedir(execPath, env)
  if (nodedir === null) {
    return fail(`no Node headers: neither ${path.resolve(path.dirname(execPath), '..', 'include', 'node')} ` +
      'nor an npm nodedir setting has node_api.h, and they are never downloaded')
  }
  const missing = missingTool(env)
  if (missing !== null) return fail(missing)
  const gyp = findNodeGyp(root, env)
  if (gyp === null) {
    return fail('no node-gyp: run the build through npm ("npm rebuild http-oneshot"), which ' +
      'brings its own, or install it with "npm install -g node-gyp"')
  }

  const [cmd, prefix] = gyp
  const args = [...prefix, 'rebuild', `--nodedir=${nodedir}`]
  if (arch !== null) args.push(`--arch=${arch}`)
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
  if (res.status === 0) {
    if (forced) log(`${NAME}: built the addon from source (--build-from-source): build/Release/http_oneshot.node`)
    return 0
  }

  fs.rmSync(path.join(root, 'build'), { recursive: true, force: true })
  const exit = res.error ? res.error.message : `node-gyp exited with ${res.status ?? res.signal}`
  const detail = ifNeeded ? failureLine((res.stderr || '') + '\n' + (res.stdout || '')) : ''
  return fail(detail ? `${exit}: ${detail}` : exit)
}

if (require.main === module) {
  process.exitCode = main({ ifNeeded: process.argv.includes('--if-needed') })
}

module.exports = { main, buildFromSource, findNodedir, findNodeGyp, missingTool, onPath, npmBundledNodeGyp }
