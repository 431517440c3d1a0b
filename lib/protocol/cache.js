'use strict'

// The probe's answer on disk per Node binary with its key, used only where
// the key equals the reader's (docs/protocols.md, "Where the probe runs");
// anything unreadable or malformed counts as none.

const fs = require('node:fs')
const path = require('node:path')

const FORMAT = 3
const PROTOCOLS = [null, 'node20', 'node24']

// FNV-1a, two 32-bit lanes: a file name and a fingerprint, not a defence
// against forgery (the key is compared whole).
function hash (text) {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x5bd1e995
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15)
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0')
}

// probe.js by its stat: any write changes its ctime, which no tool sets
// back; hashing its source would cost start-up (benchmark/startup.js).
function probeFile () {
  const st = fs.statSync(path.join(__dirname, 'probe.js'))
  return [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev].join(':')
}

function binaryKey (execPath = process.execPath) {
  let st = { size: null, mtimeMs: null, ino: null, dev: null }
  try {
    st = fs.statSync(execPath)
  } catch {}
  return JSON.stringify({
    format: FORMAT,
    version: process.version,
    execPath,
    size: st.size,
    mtimeMs: st.mtimeMs,
    ino: st.ino,
    dev: st.dev,
    platform: process.platform,
    arch: process.arch,
    config: hash(JSON.stringify(process.config)),
    versions: hash(JSON.stringify(process.versions)),
    probe: probeFile()
  })
}

function validAnswer (answer) {
  return answer !== null && typeof answer === 'object' && PROTOCOLS.includes(answer.protocol) &&
    answer.shape !== null && typeof answer.shape === 'object' && PROTOCOLS.includes(answer.write) &&
    (answer.sources === undefined || (answer.sources !== null && typeof answer.sources === 'object'))
}

function packageCacheDir () {
  const marker = `${path.sep}node_modules${path.sep}`
  const at = __dirname.lastIndexOf(marker)
  if (at === -1) return null
  return path.join(__dirname.slice(0, at + marker.length), '.cache', 'http-oneshot')
}

// The directories tried, in order, each with whether it must be this
// user's own (one others can write to could hold a forged entry).
function cacheDirs (env = process.env) {
  if (env.HTTP_ONESHOT_CACHE_DIR) return [{ dir: path.resolve(env.HTTP_ONESHOT_CACHE_DIR), own: false }]
  const dirs = []
  const os = require('node:os')
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) {
    dirs.push({ dir: path.join(env.XDG_CACHE_HOME, 'http-oneshot'), own: false })
  } else {
    let home = ''
    try {
      home = os.homedir()
    } catch {}
    if (home) dirs.push({ dir: path.join(home, '.cache', 'http-oneshot'), own: false })
  }
  const local = packageCacheDir()
  if (local !== null) dirs.push({ dir: local, own: false })
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user'
  dirs.push({ dir: path.join(os.tmpdir(), `http-oneshot-${uid}`), own: true })
  return dirs
}

function fileIn (dir, key) {
  return path.join(dir, `probe-${hash(key)}.json`)
}

function ownDir (dir) {
  try {
    const st = fs.statSync(dir)
    return st.isDirectory() && (typeof process.getuid !== 'function' || st.uid === process.getuid()) &&
      (st.mode & 0o022) === 0
  } catch {
    return false
  }
}

// The stored answer for `key` with its file, or null.
function load (key, env) {
  for (const { dir, own } of cacheDirs(env)) {
    const file = fileIn(dir, key)
    let entry
    try {
      if (own && !ownDir(dir)) continue
      entry = JSON.parse(fs.readFileSync(file, 'utf8'))
    } catch {
      continue
    }
    if (entry !== null && typeof entry === 'object' && entry.key === key && validAnswer(entry.answer)) {
      return { answer: entry.answer, file }
    }
  }
  return null
}

// Stores `answer` in the first directory that takes it; returns the file or null.
function store (key, answer, env) {
  if (!validAnswer(answer)) return null
  const text = JSON.stringify({ key, answer }) + '\n'
  for (const { dir, own } of cacheDirs(env)) {
    const file = fileIn(dir, key)
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      if (own && !ownDir(dir)) continue
      // A new file of this process's own, renamed over the entry: a reader
      // never sees a part (test/probe-cache.test.js).
      fs.writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' })
      fs.renameSync(tmp, file)
      return file
    } catch {
      try {
        fs.unlinkSync(tmp)
      } catch {}
    }
  }
  return null
}

module.exports = { binaryKey, load, store, validAnswer, cacheDirs, hash }
