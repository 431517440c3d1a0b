// `node --import http-oneshot/register app.mjs`: as register.js; ESM
// imports of http are watched as lib/preload.js says. Required, not
// imported: an import of a CommonJS file has Node lex its source for named
// exports, which costs start-up (benchmark/startup.js).
import { createRequire } from 'node:module'

createRequire(import.meta.url)('./lib/preload.js').hook()
