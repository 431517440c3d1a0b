'use strict'

// Loads lib/build.js afresh (a new, empty header-block cache) with the addon
// enabled or disabled through HTTP_ONESHOT_NATIVE, leaving the module cache
// and the environment as it found them. The buildHttpMessage() tests run
// each case on both.

const path = require('node:path')

const libDir = path.join(__dirname, '..', '..', 'lib')

/**
 * @param {boolean} native true for the addon, false for the JS fallback
 * @returns {object} the exports of a fresh lib/build.js
 */
function loadBuild (native) {
  const files = ['build.js', 'binding.js'].map(f => require.resolve(path.join(libDir, f)))
  const saved = files.map(f => require.cache[f])
  const env = process.env.HTTP_ONESHOT_NATIVE
  for (const f of files) delete require.cache[f]
  if (native) delete process.env.HTTP_ONESHOT_NATIVE
  else process.env.HTTP_ONESHOT_NATIVE = '0'
  try {
    return require(path.join(libDir, 'build.js'))
  } finally {
    if (env === undefined) delete process.env.HTTP_ONESHOT_NATIVE
    else process.env.HTTP_ONESHOT_NATIVE = env
    files.forEach((f, i) => {
      if (saved[i]) require.cache[f] = saved[i]
      else delete require.cache[f]
    })
  }
}

// The error `fn` throws, or null.
function caught (fn) {
  try {
    fn()
  } catch (err) {
    return err
  }
  return null
}

// What the buildHttpMessage() tests compare of an error (or null).
function shape (err) {
  if (err === null) return null
  return { ctor: err.constructor.name, name: err.name, code: err.code, message: err.message }
}

module.exports = { loadBuild, caught, shape }
