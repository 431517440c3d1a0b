'use strict'

// Parses `key=value` command-line arguments the way Node core's benchmark
// runner does, so a configuration reads the same on both sides.
// `defaults` fixes the accepted keys and their types: a key that is not in
// `defaults` is an error, because a misspelt key would otherwise silently
// benchmark the default configuration.

/**
 * @param {string[]} argv the arguments after the script name
 * @param {Record<string, number|string>} defaults accepted keys with default values
 * @returns {Record<string, number|string>} the configuration
 */
function parseArgs (argv, defaults) {
  const config = { ...defaults }
  for (const arg of argv) {
    const eq = arg.indexOf('=')
    if (eq <= 0) throw usageError(`expected key=value, got "${arg}"`, defaults)
    const key = arg.slice(0, eq)
    const raw = arg.slice(eq + 1)
    if (!Object.hasOwn(defaults, key)) throw usageError(`unknown key "${key}"`, defaults)
    if (typeof defaults[key] === 'number') {
      const value = Number(raw)
      if (raw === '' || !Number.isFinite(value)) {
        throw usageError(`"${key}" needs a number, got "${raw}"`, defaults)
      }
      config[key] = value
    } else {
      config[key] = raw
    }
  }
  return config
}

function usageError (message, defaults) {
  const keys = Object.entries(defaults).map(([k, v]) => `${k}=${v}`).join(' ')
  const err = new Error(`${message}\naccepted keys (defaults): ${keys}`)
  err.code = 'ERR_BENCH_USAGE'
  return err
}

/**
 * Runs `main` and turns a usage error into a short message and exit code 2.
 *
 * @param {() => Promise<void>} main the script's body
 */
function runMain (main) {
  main().catch((err) => {
    if (err.code === 'ERR_BENCH_USAGE') {
      process.stderr.write(`${err.message}\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`${err.stack}\n`)
      process.exitCode = 1
    }
  })
}

/**
 * A usage error: runMain() prints its message alone.
 * @param {string} message
 * @returns {Error}
 */
function usage (message) {
  return Object.assign(new Error(message), { code: 'ERR_BENCH_USAGE' })
}

/**
 * The comma-separated `value` of option `key` as a list, each item one of
 * `allowed`.
 * @param {string} value
 * @param {string[]} allowed
 * @param {string} key
 * @returns {string[]}
 */
function list (value, allowed, key) {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean)
  for (const item of items) {
    if (!allowed.includes(item)) throw usage(`${key}: unknown "${item}" (use ${allowed.join(', ')})`)
  }
  return items
}

/**
 * Throws a usage error unless each of `keys` of `opts` is a positive
 * integer.
 * @param {object} opts
 * @param {string[]} keys
 */
function positiveIntegers (opts, keys) {
  for (const key of keys) {
    if (!Number.isInteger(opts[key]) || opts[key] < 1) throw usage(`${key} must be a positive integer`)
  }
}

module.exports = { parseArgs, runMain, usage, list, positiveIntegers }
