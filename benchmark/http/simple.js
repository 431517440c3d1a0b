'use strict'

// HTTP throughput of a plain Node server, patched and unpatched.
// Parameters follow Node core's benchmark/http/simple.js:
//   node benchmark/http/simple.js [type=bytes|buffer] [len=4] [chunks=1]
//     [c=50] [chunkedEnc=0|1] [duration=5] [headers=0] [rounds=1]
//     [status=200|204|304] [method=GET|HEAD]
//     [mode=legacy|native|limit|both|all|<comma list>] [warmup=1]
// mode=both runs legacy then native, each in a fresh server process;
// mode=all adds the limit server (a measuring stub, see server.js).
// The server runs on CPU 0 and wrk on CPU 1 when taskset is available.
// For several interleaved rounds and a significance test use
// benchmark/compare.js.

const { parseArgs, runMain } = require('../lib/args.js')
const { SERVER_DEFAULTS, LOAD_DEFAULTS, checkConfig, parseModes, serverArgs, describe, bodyless } = require('../lib/config.js')
const { canPin } = require('../lib/cpu.js')
const { loadTool } = require('../lib/load.js')
const { runInterleaved, describeShim, formatRate } = require('../lib/measure.js')
const { median } = require('../lib/stats.js')

const MODE_ALIASES = { both: 'legacy,native', all: 'legacy,native,limit' }

async function main () {
  const config = checkConfig(parseArgs(process.argv.slice(2), {
    ...SERVER_DEFAULTS,
    ...LOAD_DEFAULTS,
    mode: 'both',
    rounds: 1
  }))
  const modes = parseModes(MODE_ALIASES[config.mode] ?? config.mode)
  const tool = loadTool(bodyless(config.method, config.status))
  console.log(`http/simple.js ${describe(config)} c=${config.c} duration=${config.duration}s ` +
    `rounds=${config.rounds} (${tool}${canPin() ? ', server on CPU 0, load on CPU 1' : ', unpinned'})`)

  const results = await runInterleaved({
    modes,
    rounds: config.rounds,
    roundOptions: (mode) => ({
      nodeArgs: serverArgs(config, mode),
      connections: config.c,
      duration: config.duration,
      warmup: config.warmup,
      method: config.method,
      bodyless: bodyless(config.method, config.status)
    }),
    onResult: (mode, round, r) => {
      let line = `${mode.padEnd(6)} ${formatRate(r.rps, r.cpuPerReq)}  p99 ${r.p99.toFixed(2)} ms`
      if (config.rounds > 1) line = `round ${round + 1}  ${line}`
      if (r.errors > 0 || r.non2xx > 0) line += `  (${r.errors} socket errors, ${r.non2xx} non-2xx)`
      console.log(line)
      if (mode === 'native') console.log(`       ${describeShim(r.shim)}`)
    }
  })

  const med = {}
  for (const mode of modes) {
    med[mode] = {
      rps: median(results[mode].map((r) => r.rps)),
      cpu: median(results[mode].map((r) => r.cpuPerReq))
    }
    if (config.rounds > 1) console.log(`median ${mode.padEnd(6)} ${formatRate(med[mode].rps, med[mode].cpu)}`)
  }
  const ratio = (a, b) => {
    if (!med[a] || !med[b]) return
    console.log(`${a}/${b}: ${(med[a].rps / med[b].rps).toFixed(3)}x req/s, ` +
      `${(med[a].cpu / med[b].cpu).toFixed(3)}x CPU µs/req`)
  }
  ratio('native', 'legacy')
  ratio('native', 'limit')
  ratio('legacy', 'limit')
}

runMain(main)
