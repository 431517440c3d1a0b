// Module customization hooks for Node lines without module.registerHooks,
// registered by lib/preload.js through module.register. They run in Node's
// hooks thread, which cannot patch the application's http, so an import of
// http or https is resolved to a generated wrapper module instead: run in
// the application's thread, it requires the builtin (which the Module._load
// watcher of lib/preload.js sees, and installs on) and re-exports it, the
// default export and every named one.

import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const WRAPPER = new URL('./http-wrapper.mjs', import.meta.url).href
const PRELOAD = fileURLToPath(new URL('./preload.js', import.meta.url))
const BUILTINS = new Map([
  ['http', 'http'], ['node:http', 'http'], ['https', 'https'], ['node:https', 'https']
])
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

export async function resolve (specifier, context, nextResolve) {
  const id = BUILTINS.get(specifier)
  if (id === undefined) return nextResolve(specifier, context)
  return { url: `${WRAPPER}?builtin=${id}`, format: 'module', shortCircuit: true }
}

export async function load (url, context, nextLoad) {
  if (!url.startsWith(WRAPPER + '?')) return nextLoad(url, context)
  const id = new URL(url).searchParams.get('builtin')
  // This thread's copy of the builtin has the same export names.
  const names = Object.keys(require(`node:${id}`)).filter((n) => n !== 'default' && IDENTIFIER.test(n))
  const source = `import { createRequire } from 'node:module'
const require = createRequire(${JSON.stringify(PRELOAD)})
const builtin = require('node:${id}')
require(${JSON.stringify(PRELOAD)}).installNow()
export default builtin
export const { ${names.join(', ')} } = builtin
`
  return { format: 'module', source, shortCircuit: true }
}
