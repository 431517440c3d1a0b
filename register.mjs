// `node --import http-oneshot/register app.mjs`: as register.js, and ESM
// imports of http are watched on every Node line (lib/preload.js).
import preload from './lib/preload.js'

preload.hook({ esm: true })
