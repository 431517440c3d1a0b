#!/usr/bin/env node
'use strict'

// `npm run prebuild` (and `prepack`, so every `npm pack` and `npm publish`
// carries one): builds the addon for this platform and stores it where
// node-gyp-build looks first in an installed package,
// prebuilds/<platform>-<arch>/http-oneshot.napi[.glibc].node, as
// `prebuildify --napi --strip` names it. Node-API keeps one binary good for
// every Node line the package supports.
//
// The build runs in a temporary copy of binding.gyp and src/, so the
// repository's own build/ (which node-gyp-build prefers, and which tests may
// be loading) is never removed on the way. Headers are found as
// scripts/build.js finds them: never downloaded.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { main: build } = require('./build.js')

const ROOT = path.resolve(__dirname, '..')

// The file name node-gyp-build matches: `napi` for any ABI; on Linux a libc
// tag too, so that a musl system (Alpine) does not load a glibc binary and
// compiles its own instead.
function prebuildName () {
  const libc = process.platform !== 'linux'
    ? ''
    : fs.existsSync('/etc/alpine-release') ? '.musl' : '.glibc'
  return `http-oneshot.napi${libc}.node`
}

function main () {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-prebuild-'))
  try {
    fs.copyFileSync(path.join(ROOT, 'binding.gyp'), path.join(tmp, 'binding.gyp'))
    fs.cpSync(path.join(ROOT, 'src'), path.join(tmp, 'src'), { recursive: true })
    const code = build({ root: tmp })
    if (code !== 0) return code

    const dir = path.join(ROOT, 'prebuilds', `${process.platform}-${process.arch}`)
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(dir, { recursive: true })
    const dest = path.join(dir, prebuildName())
    fs.copyFileSync(path.join(tmp, 'build', 'Release', 'http_oneshot.node'), dest)
    // Symbols are not needed to load the addon and triple its size.
    if (process.platform === 'linux' || process.platform === 'darwin') {
      const args = process.platform === 'darwin' ? [dest, '-Sx'] : ['--strip-all', dest]
      const res = spawnSync('strip', args, { stdio: 'inherit' })
      if (res.status !== 0) console.warn('http-oneshot: strip did not run; the prebuild keeps its symbols')
    }
    console.log(`http-oneshot: prebuild ${path.relative(ROOT, dest)} (${fs.statSync(dest).size} bytes)`)
    return 0
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

process.exitCode = main()
