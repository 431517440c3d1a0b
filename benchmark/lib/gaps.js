'use strict'

// Preloaded with -r into both servers of a round by `compare.js gaps=1`:
// the time from one request to the next on the same connection, taken in
// the server. With wrk, a connection sends its next request when it has
// read the response to the last one, so this cycle holds the server's
// whole part of each request's latency: the wait to be read, the handler,
// the write. wrk's own latency also holds wrk's scheduling, which on a
// 2-core machine, with wrk on the other core, can dominate its tail; the
// two side by side tell a slow server from a slow client.
// Recording starts at SIGUSR2 (sent by lib/measure.js when the measured
// window starts); lib/report-stats.js adds the figures to its exit line.

const dc = require('node:diagnostics_channel')
const { createHistogram } = require('node:perf_hooks')
const { onReport } = require('./report-stats.js')

const histogram = createHistogram()
const lastStart = new WeakMap()
let recording = false

dc.subscribe('http.server.request.start', ({ socket }) => {
  const now = process.hrtime.bigint()
  const before = lastStart.get(socket)
  if (recording && before !== undefined && now > before) histogram.record(now - before)
  lastStart.set(socket, now)
})

process.on('SIGUSR2', () => {
  histogram.reset()
  recording = true
})

const ms = (ns) => ns / 1e6

onReport(() => ({
  gaps: {
    count: histogram.count,
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    p999: ms(histogram.percentile(99.9)),
    max: ms(histogram.max)
  }
}))
