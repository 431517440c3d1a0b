import oneshot from './index.js'

export const {
  buildHttpMessage, isNative, loadError, install, uninstall, isInstalled, isActive, stats, resetStats,
  fallbackReason, FALLBACK
} = oneshot

export default oneshot
