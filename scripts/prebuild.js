#!/usr/bin/env node
'use strict'

// `npm run prebuilds` (and `prepack`, so every `npm pack` and `npm publish`
// carries them): builds the addon for every platform lib/prebuilds.js lists
// that this machine can build for, and stores each where node-gyp-build
// looks first in an installed package,
// prebuilds/<platform>-<arch>/http-oneshot.napi[.glibc].node, as
// `prebuildify --napi --strip` names it. Node-API keeps one binary good for
// every Node line the package supports.
//
//   node scripts/prebuild.js [--arch=x64,arm64] [--out=<dir>]
//
//   --arch  the architectures to build (default: every one lib/prebuilds.js
//           lists for this platform)
//   --out   where prebuilds/ goes (default: the repository root)
//
// On a Linux glibc machine the other architecture is cross-compiled with the
// GNU toolchain Debian packages as gcc-aarch64-linux-gnu (from x64) or
// gcc-x86-64-linux-gnu (from arm64); Node-API headers do not depend on the
// architecture, so the local ones serve. A missing cross compiler fails the
// script, naming the package, so a tarball never lacks a prebuild silently.
// Elsewhere (macOS, Windows, musl) only this machine's architecture is built.
//
// Each build runs in a temporary copy of binding.gyp and src/, so the
// repository's own build/ (which node-gyp-build prefers, and which tests may
// be loading) is never removed on the way. Headers are found as
// scripts/build.js finds them: never downloaded.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { main: build, onPath } = require('./build.js')
const { PREBUILT } = require('../lib/prebuilds.js')

const ROOT = path.resolve(__dirname, '..')

// GNU target triplets of the Linux cross toolchains, by Node's arch name.
const TRIPLETS = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }
// ELF e_machine of each architecture (the ELF specification's EM_X86_64 and
// EM_AARCH64), checked on every binary before it is stored.
const ELF_MACHINE = { x64: 62, arm64: 183 }

function isMusl () {
  return fs.existsSync('/etc/alpine-release')
}

// The file name node-gyp-build matches: `napi` for any ABI; on Linux a libc
// tag too, so that a musl system (Alpine) does not load a glibc binary and
// compiles its own instead.
function prebuildName () {
  const libc = process.platform !== 'linux' ? '' : isMusl() ? '.musl' : '.glibc'
  return `http-oneshot.napi${libc}.node`
}

// The architectures to build by default: on Linux glibc every one listed,
// elsewhere this machine's own.
function defaultArches () {
  if (process.platform !== 'linux' || isMusl()) return [process.arch]
  return PREBUILT.filter((p) => p.platform === 'linux').map((p) => p.arch)
}

/**
 * How to build for `arch` here: the environment for node-gyp (CC and the
 * rest naming the cross toolchain when `arch` is not this machine's) and
 * the strip command, or an error naming what is missing.
 * @param {string} arch
 * @param {NodeJS.ProcessEnv} env
 * @returns {{ env: NodeJS.ProcessEnv, strip: string, cross: boolean } | { error: string }}
 */
function toolchain (arch, env) {
  if (arch === process.arch) return { env, strip: 'strip', cross: false }
  const triplet = TRIPLETS[arch]
  if (process.platform !== 'linux' || isMusl() || triplet === undefined || TRIPLETS[process.arch] === undefined) {
    return { error: `cannot cross-build ${process.platform}-${arch} on ${process.platform}-${process.arch}` }
  }
  const cc = `${triplet}-gcc`
  if (!onPath(cc, env)) {
    return { error: `no cross compiler ${cc} on PATH (Debian: apt-get install gcc-${triplet.replace(/_/g, '-')})` }
  }
  return {
    env: { ...env, CC: cc, CXX: `${triplet}-g++`, LINK: cc, AR: `${triplet}-ar` },
    strip: `${triplet}-strip`,
    cross: true
  }
}

/**
 * Reads what an ELF file says about itself, or null when it is not one.
 * @param {string} file
 * @returns {{ bits: number, littleEndian: boolean, machine: number } | null}
 */
function elfHeader (file) {
  const head = Buffer.alloc(20)
  const fd = fs.openSync(file, 'r')
  try {
    if (fs.readSync(fd, head, 0, head.length, 0) < head.length) return null
  } finally {
    fs.closeSync(fd)
  }
  if (head.readUInt32BE(0) !== 0x7f454c46) return null
  const littleEndian = head[5] === 1
  return {
    bits: head[4] === 2 ? 64 : 32,
    littleEndian,
    machine: littleEndian ? head.readUInt16LE(18) : head.readUInt16BE(18)
  }
}

// Builds one architecture in a temporary copy of the sources and stores the
// stripped result under `out`. Returns an exit code.
function buildOne (arch, out, log) {
  const tools = toolchain(arch, process.env)
  if (tools.error) {
    log(`http-oneshot: prebuild ${process.platform}-${arch} failed (${tools.error})`)
    return 1
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-prebuild-'))
  try {
    fs.copyFileSync(path.join(ROOT, 'binding.gyp'), path.join(tmp, 'binding.gyp'))
    fs.cpSync(path.join(ROOT, 'src'), path.join(tmp, 'src'), { recursive: true })
    const code = build({ root: tmp, env: tools.env, arch: tools.cross ? arch : null })
    if (code !== 0) return code

    const built = path.join(tmp, 'build', 'Release', 'http_oneshot.node')
    if (process.platform === 'linux') {
      const elf = elfHeader(built)
      if (elf === null || elf.machine !== ELF_MACHINE[arch]) {
        log(`http-oneshot: prebuild ${process.platform}-${arch} failed (the binary is ELF machine ` +
          `${elf && elf.machine}, not ${ELF_MACHINE[arch]})`)
        return 1
      }
    }
    const dir = path.join(out, 'prebuilds', `${process.platform}-${arch}`)
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(dir, { recursive: true })
    const dest = path.join(dir, prebuildName())
    fs.copyFileSync(built, dest)
    // Symbols are not needed to load the addon and triple its size.
    if (process.platform === 'linux' || process.platform === 'darwin') {
      const args = process.platform === 'darwin' ? [dest, '-Sx'] : ['--strip-all', dest]
      const res = spawnSync(tools.strip, args, { stdio: 'inherit' })
      if (res.status !== 0) log(`http-oneshot: ${tools.strip} did not run; the prebuild keeps its symbols`)
    }
    const shown = out === ROOT ? path.relative(ROOT, dest) : dest
    log(`http-oneshot: prebuild ${shown} (${fs.statSync(dest).size} bytes)`)
    return 0
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

function parseArgs (argv) {
  const opts = { arches: defaultArches(), out: ROOT }
  for (const arg of argv) {
    if (arg.startsWith('--arch=')) {
      opts.arches = arg.slice(7).split(',').map((s) => s.trim()).filter(Boolean)
    } else if (arg.startsWith('--out=')) {
      opts.out = path.resolve(arg.slice(6))
    } else {
      throw new Error(`unknown argument: ${arg}`)
    }
  }
  return opts
}

function main (argv) {
  const opts = parseArgs(argv)
  const log = (line) => console.log(line)
  for (const arch of opts.arches) {
    const code = buildOne(arch, opts.out, log)
    if (code !== 0) return code
  }
  return 0
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2))
}

module.exports = { elfHeader, prebuildName, toolchain, ELF_MACHINE }
