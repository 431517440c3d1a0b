'use strict'

// Framework hello-world apps with and without `node -r register.js`:
//   node benchmark/apps.js [apps=fastify,express] (also koa, hapi, hono, h3) [routes=json,text]
//     [rounds=4] [duration=5] [c=50] [warmup=1] [json=<file>]
// Each app runs as a fresh child process per round (pinned to CPU 0, wrk on
// CPU 1), legacy and native interleaved. The default run (4 targets x 4
// rounds x 2 modes x 6 s) takes about 3.5 minutes.

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs, runMain, list, positiveIntegers } = require('./lib/args.js')
const { canPin } = require('./lib/cpu.js')
const { loadTool } = require('./lib/load.js')
const { runInterleaved, printRound, summarizeRate } = require('./lib/measure.js')
const { welch } = require('./lib/stats.js')

const ROOT = path.join(__dirname, '..')
const REGISTER = path.join(ROOT, 'register.js')
const REPORT_STATS = path.join(__dirname, 'lib', 'report-stats.js')

const APPS = {
  fastify: { script: path.join(__dirname, 'apps', 'fastify-hello.js'), routes: { json: '/', text: '/text' } },
  express: { script: path.join(__dirname, 'apps', 'express-hello.js'), routes: { text: '/', json: '/json' } },
  koa: { script: path.join(__dirname, 'apps', 'koa-hello.js'), routes: { text: '/', json: '/json' } },
  hapi: { script: path.join(__dirname, 'apps', 'hapi-hello.js'), routes: { text: '/', json: '/json' } },
  hono: { script: path.join(__dirname, 'apps', 'hono-hello.js'), routes: { text: '/', json: '/json' } },
  h3: { script: path.join(__dirname, 'apps', 'h3-hello.js'), routes: { text: '/' } }
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    apps: 'fastify,express',
    routes: 'json,text',
    rounds: 4,
    duration: 5,
    c: 50,
    warmup: 1,
    json: ''
  })
  positiveIntegers(opts, ['rounds', 'duration', 'c'])
  const apps = list(opts.apps, Object.keys(APPS), 'apps')
  const routes = list(opts.routes, ['json', 'text'], 'routes')
  if (!fs.existsSync(REGISTER)) {
    throw new Error(`${REGISTER} does not exist: the native variant needs it for "node -r register.js"`)
  }

  console.log(`${loadTool()} -t1 -c${opts.c} -d${opts.duration}s after ${opts.warmup} s warm-up, ` +
    `${opts.rounds} interleaved rounds${canPin() ? ', app on CPU 0, load on CPU 1' : ', unpinned'}; Node ${process.version}`)
  const results = []
  for (const app of apps) {
    for (const route of routes) {
      const urlPath = APPS[app].routes[route]
      if (urlPath === undefined) continue // h3's app has a text route only
      console.log(`${app} ${route} (GET ${urlPath})`)
      const runs = await runInterleaved({
        modes: ['legacy', 'native'],
        rounds: opts.rounds,
        roundOptions: (mode) => ({
          // The stats reporter is preloaded only with register.js, so the
          // legacy process never loads anything of the package.
          nodeArgs: mode === 'native'
            ? ['-r', REGISTER, '-r', REPORT_STATS, APPS[app].script]
            : [APPS[app].script],
          urlPath,
          connections: opts.c,
          duration: opts.duration,
          warmup: opts.warmup
        }),
        onResult: (mode, round, r) => printRound(mode, round, r, mode === 'native' && round === 0)
      })
      const summary = {}
      for (const mode of ['legacy', 'native']) summary[mode] = summarizeRate(runs[mode])
      const result = {
        app,
        route,
        urlPath,
        ...summary,
        ratio: summary.native.median / summary.legacy.median,
        cpuRatio: summary.native.cpuMedian / summary.legacy.cpuMedian,
        welch: welch(summary.native.rps, summary.legacy.rps)
      }
      results.push(result)
    }
  }

  console.log('')
  console.log('| app | route | legacy req/s | native req/s | ratio | CPU µs/req legacy / native | busy | p |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const r of results) {
    const p = r.welch === null ? 'n/a' : r.welch.p < 0.001 ? r.welch.p.toExponential(1) : r.welch.p.toFixed(3)
    console.log(`| ${r.app} | ${r.route} | ${Math.round(r.legacy.median).toLocaleString('en-US')} | ` +
      `${Math.round(r.native.median).toLocaleString('en-US')} | ${r.ratio.toFixed(3)}x | ` +
      `${r.legacy.cpuMedian.toFixed(1)} / ${r.native.cpuMedian.toFixed(1)} | ` +
      `${Math.round(100 * r.legacy.busyMedian)}% / ${Math.round(100 * r.native.busyMedian)}% | ${p} |`)
  }
  if (opts.json !== '') {
    fs.writeFileSync(opts.json, JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2) + '\n')
    console.log(`results written to ${opts.json}`)
  }
}

runMain(main)
