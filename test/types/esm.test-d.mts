// Checked by `npm run test:types` (tsc --noEmit), never run. An ES module:
// 'http-oneshot' resolves through the "import" condition to index.d.mts,
// which must type every export of lib/index.mjs, the default one included.

import oneshot, {
  FALLBACK, buildHttpMessage, fallbackReason, install, isActive, isInstalled, isNative,
  loadError, resetStats, stats, uninstall
} from 'http-oneshot'
import type { FallbackReason, InstallOptions } from 'http-oneshot'

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function assertType<A, B> (same: Equal<A, B>): Equal<A, B> {
  return same
}

assertType<typeof FALLBACK.NOT_SOCKET_OWNER, 'not-socket-owner'>(true)
// @ts-expect-error: a misspelled key
console.log(FALLBACK.HEADER_SENT)
// @ts-expect-error: a wrong option type
install({ maxBodySize: true })
const options: InstallOptions = { maxBodySize: 10 }
install(options)

// The default export is the CommonJS module object.
assertType<typeof oneshot.install, typeof install>(true)
assertType<typeof oneshot.uninstall, typeof uninstall>(true)
assertType<typeof oneshot.isInstalled, typeof isInstalled>(true)
assertType<typeof oneshot.isActive, typeof isActive>(true)
assertType<typeof oneshot.stats, typeof stats>(true)
assertType<typeof oneshot.resetStats, typeof resetStats>(true)
assertType<typeof oneshot.fallbackReason, typeof fallbackReason>(true)
assertType<typeof oneshot.buildHttpMessage, typeof buildHttpMessage>(true)
assertType<typeof oneshot.isNative, typeof isNative>(true)
assertType<typeof oneshot.loadError, typeof loadError>(true)
assertType<typeof oneshot.FALLBACK, typeof FALLBACK>(true)
const reason: FallbackReason = oneshot.FALLBACK.TRAILERS
console.log(reason)
