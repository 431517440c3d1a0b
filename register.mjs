// `node --import http-oneshot/register app.mjs`: the CommonJS register does
// the work; http is a builtin singleton, so ESM apps see the same patch.
import './register.js'
