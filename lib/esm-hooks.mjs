// Module hooks for lines without module.registerHooks. They run in Node's hooks thread, which
// cannot patch the application's http, so an import of http or https resolves to a generated
// module that, in the application's thread, requires the builtin, tells the preload, and
// re-exports every export.

import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const WRAPPER = new URL('./http-wrapper.mjs', import.meta.url).href
const PRELOAD = fileURLToPath(new URL('./preload.js', import.meta.url))
const BUILTINS = new Map([['http', 'http'], ['node:http', 'http'], ['https', 'https'], ['node:https', 'https']])
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
require(${JSON.stringify(PRELOAD)}).httpSeen()
export default builtin
export const { ${names.join(', ')} } = builtin
`
  return { format: 'module', source, shortCircuit: true }
}
