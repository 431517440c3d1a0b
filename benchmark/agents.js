'use strict'

// Server CPU time per request under an APM agent, with and without
// http-oneshot (issue 44, point 6):
//   node benchmark/agents.js [agents=dd,otel] (also nr, elastic)
//     [apps=express,fastify] [rounds=4] [duration=5] [c=50] [warmup=2] [json=<file>]
// Three modes per agent and app, each round a fresh server process (pinned
// to CPU 0, wrk on CPU 1), interleaved (ABBA over the three):
//   agent   node -r <agent> app.js: the agent alone, the package not loaded
//   first   node -r <agent> -r register.js app.js: the agent's documented
//           order (the package off where the agent replaced
//           ServerResponse#end first: the printed stats say so)
//   after   node -r register.js -r <agent> app.js
// The agents send what they record to a sink in this process on
// 127.0.0.1 (dd-trace's agent URL, OTLP over HTTP, Elastic's intake), which
// answers and discards it; New Relic's collector is a closed port. Their
// export work is part of the server's CPU time, the same in every mode.
// CPU time is the server process's utime + stime (all threads, what
// process.cpuUsage() reports) over the measured window, divided by the
// requests wrk completed in it (lib/measure.js).
// The current majors of dd-trace and New Relic do not start on Node 20:
// there they are skipped.

const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const { parseArgs, runMain, list, positiveIntegers } = require('./lib/args.js')
const { canPin } = require('./lib/cpu.js')
const { loadTool } = require('./lib/load.js')
const { runInterleaved, printRound } = require('./lib/measure.js')
const { median, welch } = require('./lib/stats.js')

const ROOT = path.join(__dirname, '..')
const REGISTER = path.join(ROOT, 'register.js')
const REPORT_STATS = path.join(__dirname, 'lib', 'report-stats.js')
const NODE_MAJOR = Number(process.versions.node.split('.')[0])

const APPS = {
  express: { script: path.join(__dirname, 'apps', 'express-hello.js'), urlPath: '/', route: 'text' },
  fastify: { script: path.join(__dirname, 'apps', 'fastify-hello.js'), urlPath: '/', route: 'json' }
}

const AGENTS = {
  dd: { name: 'dd-trace', preload: 'dd-trace/init', minMajor: 22 },
  otel: { name: 'OpenTelemetry', preload: path.join(__dirname, 'lib', 'otel-agent.js'), minMajor: 20 },
  nr: { name: 'New Relic', preload: 'newrelic', minMajor: 22 },
  elastic: { name: 'Elastic APM', preload: 'elastic-apm-node/start', minMajor: 20 }
}

const MODES = ['agent', 'first', 'after']

// The receiver of every agent's data: answers as each expects, keeps nothing.
async function startSink () {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url.startsWith('/v0.')) {
        res.setHeader('Content-Type', 'application/json')
        res.end('{"rate_by_service":{}}')
      } else if (req.url.startsWith('/intake/')) {
        res.statusCode = 202
        res.end()
      } else if (req.url === '/' && req.method === 'GET') {
        res.setHeader('Content-Type', 'application/json')
        res.end('{"version":"8.15.0"}')
      } else {
        res.end()
      }
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => { server.closeAllConnections(); server.close() } }
}

async function closedPort () {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// Each agent's settings: its sink, and nothing that reaches out or adds
// work of its own (remote configuration, telemetry, profiling, runtime
// metrics, cloud metadata).
function agentEnv (agent, sink, nrPort) {
  switch (agent) {
    case 'dd': return {
      DD_TRACE_AGENT_URL: sink.url,
      DD_SERVICE: 'http-oneshot-bench',
      DD_TRACE_STARTUP_LOGS: 'false',
      DD_INSTRUMENTATION_TELEMETRY_ENABLED: 'false',
      DD_REMOTE_CONFIGURATION_ENABLED: 'false',
      DD_RUNTIME_METRICS_ENABLED: 'false',
      DD_PROFILING_ENABLED: 'false',
      DD_CRASHTRACKING_ENABLED: 'false'
    }
    case 'otel': return {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/v1/traces`,
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_NODE_RESOURCE_DETECTORS: 'none'
    }
    case 'nr': return {
      NEW_RELIC_LICENSE_KEY: '0123456789abcdef0123456789abcdef01234567',
      NEW_RELIC_APP_NAME: 'http-oneshot-bench',
      NEW_RELIC_HOST: '127.0.0.1',
      NEW_RELIC_PORT: String(nrPort),
      NEW_RELIC_NO_CONFIG_FILE: 'true',
      NEW_RELIC_LOG_ENABLED: 'false',
      NEW_RELIC_UTILIZATION_DETECT_AWS: 'false',
      NEW_RELIC_UTILIZATION_DETECT_AZURE: 'false',
      NEW_RELIC_UTILIZATION_DETECT_GCP: 'false',
      NEW_RELIC_UTILIZATION_DETECT_PCF: 'false',
      NEW_RELIC_UTILIZATION_DETECT_DOCKER: 'false',
      NEW_RELIC_UTILIZATION_DETECT_KUBERNETES: 'false'
    }
    case 'elastic': return {
      ELASTIC_APM_SERVER_URL: sink.url,
      ELASTIC_APM_SERVICE_NAME: 'http-oneshot-bench',
      ELASTIC_APM_CENTRAL_CONFIG: 'false',
      ELASTIC_APM_CLOUD_PROVIDER: 'none',
      ELASTIC_APM_METRICS_INTERVAL: '0s',
      ELASTIC_APM_LOG_LEVEL: 'off'
    }
  }
}

function nodeArgs (mode, agent, script) {
  const preload = AGENTS[agent].preload
  if (mode === 'agent') return ['-r', preload, script]
  if (mode === 'first') return ['-r', preload, '-r', REGISTER, '-r', REPORT_STATS, script]
  return ['-r', REGISTER, '-r', preload, '-r', REPORT_STATS, script]
}

const formatP = (w) => (w === null ? 'n/a' : w.p < 0.001 ? '<0.001' : w.p.toFixed(3))

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    agents: 'dd,otel',
    apps: 'express,fastify',
    rounds: 4,
    duration: 5,
    c: 50,
    warmup: 2,
    json: ''
  })
  positiveIntegers(opts, ['rounds', 'duration', 'c'])
  const agents = list(opts.agents, Object.keys(AGENTS), 'agents')
  const apps = list(opts.apps, Object.keys(APPS), 'apps')
  const sink = await startSink()
  const nrPort = await closedPort()
  console.log(`${loadTool()} -t1 -c${opts.c} -d${opts.duration}s after ${opts.warmup} s warm-up, ` +
    `${opts.rounds} interleaved rounds${canPin() ? ', app on CPU 0, load on CPU 1' : ', unpinned'}; Node ${process.version}`)
  const results = []
  try {
    for (const agent of agents) {
      if (NODE_MAJOR < AGENTS[agent].minMajor) {
        console.log(`${AGENTS[agent].name}: skipped, its current major does not start on Node ${NODE_MAJOR}`)
        continue
      }
      for (const app of apps) {
        const { script, urlPath, route } = APPS[app]
        console.log(`${AGENTS[agent].name}, ${app} ${route} (GET ${urlPath})`)
        const runs = await runInterleaved({
          modes: MODES,
          rounds: opts.rounds,
          roundOptions: (mode) => ({
            nodeArgs: nodeArgs(mode, agent, script),
            env: agentEnv(agent, sink, nrPort),
            urlPath,
            connections: opts.c,
            duration: opts.duration,
            warmup: opts.warmup
          }),
          onResult: (mode, round, r) => printRound(mode, round, r, mode !== 'agent' && round === 0)
        })
        const summary = {}
        for (const mode of MODES) {
          const cpu = runs[mode].map((r) => r.cpuPerReq)
          const rps = runs[mode].map((r) => r.rps)
          const shim = runs[mode][0].shim
          summary[mode] = { cpu, rps, cpuMedian: median(cpu), rpsMedian: median(rps), stats: shim && shim.stats }
        }
        results.push({
          agentId: agent,
          app,
          route,
          ...summary,
          firstRatio: { ratio: summary.first.cpuMedian / summary.agent.cpuMedian, welch: welch(summary.first.cpu, summary.agent.cpu) },
          afterRatio: { ratio: summary.after.cpuMedian / summary.agent.cpuMedian, welch: welch(summary.after.cpu, summary.agent.cpu) }
        })
      }
    }
  } finally {
    sink.close()
  }

  const share = (s) => {
    if (!s) return 'n/a'
    const total = s.native + s.fallback
    if (s.inactiveReason) return `off (${s.inactiveReason})`
    return total === 0 ? 'n/a' : `${(100 * s.native / total).toFixed(0)}%`
  }
  console.log('')
  console.log('Server CPU µs per request (median of rounds); ratio = with the package / agent alone; p from Welch\'s t-test')
  console.log('| agent | app | agent alone | agent first, package after | ratio (p) | native | package first, agent after | ratio (p) | native |')
  console.log('|---|---|---:|---:|---|---|---:|---|---|')
  for (const r of results) {
    console.log(`| ${AGENTS[r.agentId].name} | ${r.app} ${r.route} | ${r.agent.cpuMedian.toFixed(1)} | ` +
      `${r.first.cpuMedian.toFixed(1)} | ${r.firstRatio.ratio.toFixed(2)}× (${formatP(r.firstRatio.welch)}) | ${share(r.first.stats)} | ` +
      `${r.after.cpuMedian.toFixed(1)} | ${r.afterRatio.ratio.toFixed(2)}× (${formatP(r.afterRatio.welch)}) | ${share(r.after.stats)} |`)
  }
  if (opts.json !== '') {
    fs.writeFileSync(opts.json, JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2) + '\n')
    console.log(`results written to ${opts.json}`)
  }
}

runMain(main)
