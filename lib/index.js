'use strict'

// The public API; loads neither node:http nor the addon until needed, so the preload can wait for http.

const util = require('node:util')
const { disabledByEnv, reportWanted } = require('./env.js')

const debug = util.debuglog('http-oneshot')

let shim = null
// The shim reads Node's methods as it loads: with the stand-ins off.
function loadShim () {
  if (shim === null) shim = patches().bare(() => require('./shim.js'), false)
  return shim
}

const patches = () => require('./patches.js')

// Why the addon is null is on lib/binding.js's module record.
function bindingState () {
  const binding = require('./binding.js')
  const record = require.cache[require.resolve('./binding.js')]
  return { binding, loadError: record?.loadError || null, loadAdvice: record?.loadAdvice || null }
}

// Why the native path is not running (NODE_DEBUG, the warning, the report).
let inactive = disabledByEnv()
  ? { reason: 'disabled', message: disabledMessage() }
  : { reason: 'not-installed', message: 'install() has not run (the preload waits for the application to load http)' }
// install() asked for and not undone: a later probe answer installs then.
let wanted = false
let warned = false
// Responses Node's own path took while the probe's answer was awaited.
let pending = 0

function disabledMessage () {
  return `turned off by HTTP_ONESHOT=${process.env.HTTP_ONESHOT}`
}

function setInactive (reason, message) {
  inactive = { reason, message }
  debug('inactive (%s): %s', reason, message)
}

// Warns for an explicit install() only, once; the preload's reason is in the stats.
function stayOff (reason, message, explicit) {
  setInactive(reason, message)
  if (!explicit || warned) return
  warned = true
  process.emitWarning(`http-oneshot is not installed: ${inactive.message}. ` +
    'Every response takes Node\'s own path.', { code: 'HTTP_ONESHOT_INACTIVE' })
}

function bindingProblem () {
  const { binding, loadError, loadAdvice } = bindingState()
  if (binding !== null) return null
  if (process.env.HTTP_ONESHOT_NATIVE === '0') {
    return { reason: 'addon-disabled', message: 'the addon is disabled by HTTP_ONESHOT_NATIVE=0' }
  }
  const message = loadError ? String(loadError.message).split('\n')[0].trim() : 'unknown error'
  return {
    reason: 'addon-not-loaded',
    message: `the native addon did not load (${message})` + (loadAdvice ? `; ${loadAdvice}` : '')
  }
}

// Published before the 'request' event.
const REQUEST_START = 'http.server.request.start'
let counting = false
const countPending = () => { pending++ }

function countWhilePending (on) {
  if (on === counting) return
  counting = on
  const dc = require('node:diagnostics_channel')
  if (on) dc.subscribe(REQUEST_START, countPending)
  else dc.unsubscribe(REQUEST_START, countPending)
}

// Loading the shim reads the probe's answer, stored or probed now.
function installShim (explicit) {
  countWhilePending(false)
  patches().settle(() => installWhereItRuns(explicit))
}

// The line first: where the shim cannot run, nothing else matters.
function installWhereItRuns (explicit) {
  const http = require('node:http')
  loadShim()
  if (require('./internals.js') === null) {
    // Node's Date is read through _storeHeader(): not through a wrapper.
    const store = wrappers(false).find((w) => w.method === 'OutgoingMessage.prototype._storeHeader')
    if (store !== undefined) {
      stayOff('wrapped', `OutgoingMessage.prototype._storeHeader was already wrapped by another module (function ${store.wrapper})`, explicit)
    } else {
      stayOff('unsupported-node', `Node ${process.version} is not a line whose http internals http-oneshot reproduces`, explicit)
    }
    return
  }
  if (!patches().isInstalled() && Object.hasOwn(http.ServerResponse.prototype, 'end')) {
    // Another agent already defined ServerResponse#end: stay out of its way.
    const end = wrappers(false).find((w) => w.method === 'ServerResponse.prototype.end')
    stayOff('end-replaced', 'http.ServerResponse.prototype.end was already replaced by another module' +
      (end === undefined ? '' : ` (function ${end.wrapper})`), explicit)
    return
  }
  patches().install()
  inactive = null
  debug('installed')
  if (debug.enabled) {
    for (const w of wrappers(true)) {
      debug('wrapper in Node\'s place before install: %s is %s (%s): %s', w.method, w.wrapper,
        w.file || 'file unknown', w.advice)
    }
  }
}

// The probe child answered, or gave none (the shim then probes here). A response begun on Node's
// path meets the shim at its next call, which decides from its state (test/startup-cache.test.js).
function onProbeAnswer () {
  countWhilePending(false)
  if (wanted && !installedNow()) installShim(false)
}

// `explicit` (application code): may warn, and waits for the probe where no
// answer is stored; the preload does neither (Node's path until it answers).
function activate (explicit) {
  wanted = true
  patches().cancel()
  if (installedNow()) return
  const problem = bindingProblem()
  if (problem !== null) {
    // The stand-ins give their places back to Node's methods.
    patches().settle(() => {})
    stayOff(problem.reason, problem.message, explicit && problem.reason !== 'addon-disabled')
    return
  }
  if (!explicit && shim === null) {
    if (inactive !== null && inactive.reason === 'probe-pending') return
    if (require('./protocol/answer.js').knownAnswer() === undefined &&
        require('./protocol/probe.js').probeInBackground(onProbeAnswer)) {
      countWhilePending(true)
      setInactive('probe-pending', 'the behaviour probe of this Node binary has not answered yet; ' +
        'its answer is stored for the next process')
      return
    }
  }
  installShim(explicit)
}

/**
 * Patches http.ServerResponse.prototype so that common responses go out in
 * one socket write. Idempotent; a later call without options keeps them.
 * @param {{ maxBodySize?: number }} [options]
 * @returns {() => void} uninstall
 */
function install (options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('The "options" argument must be of type object')
  const max = options.maxBodySize
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 0)) {
    const message = 'The "options.maxBodySize" argument must be a non-negative safe integer. Received ' + util.inspect(max)
    throw Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' })
  }
  if (reportWanted()) require('./report.js').arm()
  if (disabledByEnv()) {
    setInactive('disabled', disabledMessage())
    return uninstall
  }
  if (max !== undefined) require('./decide.js').setMaxBodySize(max)
  activate(true)
  return uninstall
}

// The preload's install(): silent, and never waits for the probe.
function installFromPreload () {
  if (disabledByEnv()) setInactive('disabled', disabledMessage())
  else activate(false)
}

// What asks for the package's state gets the answer of after the load.
function loadDeferred () {
  const preload = require('./preload.js')
  if (!preload.httpLoaded()) return
  preload.httpSeen() // loaded unseen, by process.getBuiltinModule()
  patches().runDeferred()
}

function inactiveState () {
  loadDeferred()
  return inactive === null ? null : { reason: inactive.reason, message: inactive.message }
}

/** Restores what install() replaced, and only that (lib/patches.js). Idempotent. */
function uninstall () {
  wanted = false
  patches().cancel()
  countWhilePending(false)
  patches().settle(() => {})
  if (shim !== null) patches().uninstall()
  if (inactive === null || inactive.reason === 'probe-pending') setInactive('not-installed', 'uninstall() ran')
}

// The wrappers found in Node's place; `withFile` (slow) for the report and NODE_DEBUG.
function wrappers (withFile) {
  if (shim === null) return []
  const methods = require('./node-methods.js')
  return methods.found.map(({ key, fn }) => {
    const out = methods.describe(key, fn)
    if (withFile) out.file = methods.locate(fn)
    out.advice = loadOrderAdvice(withFile ? out.file : null)
    return out
  })
}

function loadOrderAdvice (file) {
  const at = typeof file === 'string' ? file.lastIndexOf('node_modules/') : -1
  let name = 'the module that put it there'
  if (at !== -1) {
    const parts = file.slice(at + 'node_modules/'.length).split('/')
    name = parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]
  }
  return `load http-oneshot/register before ${name} (node -r http-oneshot/register -r <its preload> app.js; ` +
    'in NODE_OPTIONS, which preloads before the command line, put -r http-oneshot/register first)'
}

/** Whether the patch is in place. */
function isInstalled () {
  loadDeferred()
  return installedNow()
}

function installedNow () {
  return shim !== null && patches().isInstalled()
}

/** Whether responses can take the native path: installed, addon loaded, Node line reproduced. */
function isActive () {
  return isInstalled() && bindingState().binding !== null && require('./internals.js') !== null
}

/** Counters since load or resetStats(), and why inactive (index.d.ts Stats). */
function stats () {
  loadDeferred()
  const counted = shim === null
    ? { native: 0, fallback: 0, direct: 0, partial: 0, reasons: {}, writes: { native: 0, fallback: 0 } }
    : shim.counts()
  if (pending !== 0) counted.reasons['probe-pending'] = pending
  return {
    ...counted,
    fallback: counted.fallback + pending,
    inactiveReason: inactive === null ? null : inactive.reason,
    wrapped: wrappers(false).map(({ method, wrapper }) => ({ method, wrapper }))
  }
}

function resetStats () {
  pending = 0
  if (shim !== null) shim.resetStats()
}

/** Null when res.end(chunk, encoding) may take the native path, else the FALLBACK reason. */
function fallbackReason (res, chunk, encoding) {
  return loadShim().fallbackReason(res, chunk, encoding)
}

module.exports = { install, uninstall, isInstalled, isActive, stats, resetStats, fallbackReason }

// Values that need http or the addon are read on first use.
Object.defineProperties(module.exports, {
  buildHttpMessage: { enumerable: true, get: () => require('./build.js').buildHttpMessage },
  isNative: { enumerable: true, get: () => bindingState().binding !== null },
  loadError: { enumerable: true, get: () => bindingState().loadError },
  FALLBACK: { enumerable: true, get: () => loadShim().FALLBACK },
  // Not part of the API.
  installFromPreload: { enumerable: false, value: installFromPreload },
  wrappers: { enumerable: false, value: wrappers },
  inactiveState: { enumerable: false, value: inactiveState }
})
