// The ESM entry (lib/index.mjs): the same named exports as the CommonJS
// entry, plus a default export, the CommonJS module object itself.
import * as oneshot from './index.js'

export * from './index.js'
export default oneshot
