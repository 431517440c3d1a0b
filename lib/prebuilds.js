'use strict'

// The platforms the published tarball carries a prebuilt addon for
// (scripts/prebuild.js makes them); elsewhere the install compiles one.

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
