'use strict'

// Starts a benchmark server in a child process pinned to its own CPU, waits
// until it accepts connections, and stops it again. A fresh process per
// round keeps JIT state, heap size and socket tables of one variant from
// leaking into the next.

const { spawn } = require('node:child_process')
const net = require('node:net')
const { pinned } = require('./cpu.js')

const SERVER_CPU = 0
const STATS_EVENT = 'http-oneshot-bench-stats'

/**
 * Finds a free TCP port on the loopback interface.
 *
 * @returns {Promise<number>}
 */
function getFreePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

function canConnect (port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * Spawns `node <nodeArgs>` with PORT set and resolves once the port accepts
 * connections. The returned `stop()` sends SIGTERM and resolves with the
 * last stats line the child printed (see STATS_EVENT), or null.
 *
 * @param {object} options
 * @param {string[]} options.nodeArgs arguments to node (flags, script, script args)
 * @param {Record<string, string>} [options.env] extra environment
 * @param {boolean} [options.pin] pin the child to SERVER_CPU (default true)
 * @returns {Promise<{pid: number, port: number, stop: () => Promise<object|null>}>}
 */
async function startServer ({ nodeArgs, env = {}, pin = true }) {
  const port = await getFreePort()
  const childEnv = { ...process.env, ...env, PORT: String(port) }
  // A globally set HTTP_ONESHOT=0 would silently turn the native variant
  // into the legacy one; each variant decides for itself.
  if (!Object.hasOwn(env, 'HTTP_ONESHOT')) delete childEnv.HTTP_ONESHOT
  const [file, args] = pinned(pin ? SERVER_CPU : null, process.execPath, nodeArgs)
  const child = spawn(file, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })

  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d) => {
    stderr += d
    process.stderr.write(d)
  })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  let exitInfo = null
  exited.then((info) => { exitInfo = info })

  const deadline = Date.now() + 15000
  while (!(await canConnect(port))) {
    if (exitInfo !== null) {
      throw new Error(`server exited before listening (code ${exitInfo.code}, signal ${exitInfo.signal}): node ${nodeArgs.join(' ')}\n${stderr}`)
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server did not listen on port ${port} within 15 s: node ${nodeArgs.join(' ')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  async function stop () {
    if (exitInfo === null) child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000)
    await exited
    clearTimeout(timer)
    const stats = lastStats(stdout)
    return stats
  }

  return { pid: child.pid, port, stop }
}

/**
 * The last stats line a benchmark server printed (see STATS_EVENT), parsed,
 * or null.
 *
 * @param {string} stdout the server's standard output
 * @returns {object|null}
 */
function lastStats (stdout) {
  let stats = null
  for (const line of stdout.split('\n')) {
    if (line.startsWith('{') && line.includes(STATS_EVENT)) {
      try {
        stats = JSON.parse(line)
      } catch {}
    }
  }
  return stats
}

module.exports = { startServer, getFreePort, lastStats, STATS_EVENT }
