'use strict'

// The platforms the published tarball carries a prebuilt addon for.
// scripts/prebuild.js makes one per entry (the linux-arm64 one with a cross
// compiler) and node-gyp-build picks the one matching the running process at
// load time. Everywhere else the install script compiles the addon, which
// needs a C toolchain; the load-error and install messages name this list.

const PREBUILT = [
  { platform: 'linux', arch: 'x64', libc: 'glibc' },
  { platform: 'linux', arch: 'arm64', libc: 'glibc' }
]

// "linux-x64 and linux-arm64 (glibc)", for messages.
function prebuiltList () {
  const names = PREBUILT.map((p) => `${p.platform}-${p.arch}`)
  const libcs = [...new Set(PREBUILT.map((p) => p.libc))]
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} (${libcs.join(', ')})`
}

module.exports = { PREBUILT, prebuiltList }
