// `node --import http-oneshot/register app.mjs`: as register.js; ESM
// imports of http are watched as lib/preload.js says.
import preload from './lib/preload.js'

preload.hook()
