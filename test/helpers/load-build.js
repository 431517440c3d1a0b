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

module.exports = { loadBuild }
