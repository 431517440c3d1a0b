'use strict'

// CPU pinning and per-process CPU accounting for the HTTP benchmarks.
// On a 2-core machine the server and the load generator must not share a
// core, or each steals cycles from the other and the ratio between two
// server variants shrinks towards 1.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')

let clockTicks = null

// Kernel clock ticks per second (USER_HZ), the unit of utime and stime in
// /proc/<pid>/stat; 100 on every common Linux build.
function ticksPerSecond () {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    } catch {
      clockTicks = 100
    }
    if (!Number.isInteger(clockTicks) || clockTicks <= 0) clockTicks = 100
  }
  return clockTicks
}

/**
 * User plus system CPU time consumed so far by process `pid`, in
 * microseconds, with the resolution of one clock tick (10 ms at 100 Hz).
 *
 * @param {number} pid a live process id
 * @returns {number} CPU time in microseconds
 */
function cpuTimeMicros (pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
  // The command name (field 2) is in parentheses and may itself contain
  // spaces or parentheses, so split only what follows the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (state), so utime (14) and stime (15) sit at 11, 12.
  const ticks = Number(fields[11]) + Number(fields[12])
  return ticks * 1e6 / ticksPerSecond()
}

let tasksetPath

function findTaskset () {
  if (tasksetPath === undefined) {
    tasksetPath = null
    for (const dir of (process.env.PATH || '').split(':')) {
      if (dir && fs.existsSync(`${dir}/taskset`)) {
        tasksetPath = `${dir}/taskset`
        break
      }
    }
  }
  return tasksetPath
}

/**
 * Whether the server and the load generator get a core each: needs taskset
 * and at least two CPUs.
 *
 * @returns {boolean}
 */
function canPin () {
  return findTaskset() !== null && os.availableParallelism() >= 2
}

/**
 * Wraps a command so it runs on one CPU. taskset execs the command, so the
 * child's pid stays the pid of the command itself, which /proc accounting
 * relies on.
 *
 * @param {number|null} cpu CPU index, or null for no pinning
 * @param {string} file executable
 * @param {string[]} args its arguments
 * @returns {[string, string[]]} the file and arguments to spawn
 */
function pinned (cpu, file, args) {
  if (cpu === null || !canPin()) return [file, args]
  return [findTaskset(), ['-c', String(cpu), file, ...args]]
}

module.exports = { cpuTimeMicros, ticksPerSecond, canPin, pinned }
