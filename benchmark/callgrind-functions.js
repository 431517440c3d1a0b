'use strict'

// Self instructions per request by function, from dumps that
// benchmark/instructions.js kept (keep=<dir>), side by side:
//   node benchmark/callgrind-functions.js <a.callgrind> [<b.callgrind> ...]
//     [requests=8000] [top=40] [match=<regexp>]
// Each dump's JIT code is named from the V8 map kept next to it
// (<name>.map, written with flags=--perf-basic-prof), else it counts as
// "[JIT]": callgrind itself names JIT code by address only. With two or
// more dumps the rows are ordered by the largest difference from the
// first, so what one variant adds over another comes first; `match`
// keeps only the functions whose name it matches.

const fs = require('node:fs')
const { parseArgs, runMain } = require('./lib/args.js')

// [start, size, name] rows of a perf map, sorted by start.
function readMap (file) {
  if (!fs.existsSync(file)) return null
  const rows = []
  for (const line of fs.readFileSync(file, 'latin1').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (m !== null) rows.push([parseInt(m[1], 16), parseInt(m[2], 16), m[3]])
  }
  return rows.sort((a, b) => a[0] - b[0])
}

// The map's name for the code at `address`, or null.
function lookUp (rows, address) {
  let lo = 0
  let hi = rows.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (rows[mid][0] <= address) lo = mid + 1
    else hi = mid - 1
  }
  const row = rows[hi]
  return row !== undefined && address < row[0] + row[1] ? row[2] : null
}

// Self cost by function name: every cost line of a function that is not
// the inclusive cost of a call (the line after `calls=`).
function selfCosts (file) {
  const rows = readMap(file.replace(/\.callgrind$/, '.map'))
  const names = new Map()
  const costs = new Map()
  let fn = ''
  let afterCall = false
  for (const line of fs.readFileSync(file, 'latin1').split('\n')) {
    const named = /^(c?fn)=\((\d+)\)(?: (.*))?$/.exec(line)
    if (named !== null) {
      if (named[3] !== undefined) names.set(named[2], named[3])
      if (named[1] === 'fn') fn = displayName(names.get(named[2]), rows)
      continue
    }
    if (line.startsWith('calls=')) {
      afterCall = true
    } else if (/^[0-9+\-*]/.test(line)) {
      if (afterCall) {
        afterCall = false
      } else {
        const ir = Number(line.split(' ')[1])
        if (ir > 0) costs.set(fn, (costs.get(fn) ?? 0) + ir)
      }
    }
  }
  return costs
}

function displayName (name, rows) {
  const address = /^0x([0-9a-f]+)/.exec(name)
  if (address === null) return name
  return (rows === null ? null : lookUp(rows, parseInt(address[1], 16))) ?? '[JIT]'
}

async function main () {
  const files = process.argv.slice(2).filter((a) => !/^\w+=/.test(a))
  const opts = parseArgs(process.argv.slice(2).filter((a) => /^\w+=/.test(a)), {
    requests: 8000, top: 40, match: ''
  })
  if (files.length === 0) throw new Error('usage: callgrind-functions.js <a.callgrind> [<b.callgrind> ...] [requests=8000] [top=40] [match=]')
  const all = files.map(selfCosts)
  const match = opts.match === '' ? null : new RegExp(opts.match)
  const keys = [...new Set(all.flatMap((c) => [...c.keys()]))].filter((k) => match === null || match.test(k))
  const per = (c, k) => (c.get(k) ?? 0) / opts.requests
  const order = all.length > 1
    ? (k) => Math.max(...all.slice(1).map((c) => Math.abs(per(c, k) - per(all[0], k))))
    : (k) => per(all[0], k)
  keys.sort((a, b) => order(b) - order(a))
  const total = (c) => [...c.values()].reduce((s, v) => s + v, 0) / opts.requests
  console.log(all.map((c) => total(c).toFixed(0).padStart(9)).join('') + '  total Ir per request')
  for (const k of keys.slice(0, opts.top)) {
    console.log(all.map((c) => per(c, k).toFixed(1).padStart(9)).join('') + `  ${k.slice(0, 140)}`)
  }
}

runMain(main)
