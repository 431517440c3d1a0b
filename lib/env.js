'use strict'

// The operator's switches: HTTP_ONESHOT=0 (off, false, no) leaves Node
// untouched; HTTP_ONESHOT_REPORT=1 prints what the package did at exit.

const OFF = /^(?:0|off|false|no)$/i

function disabledByEnv () {
  const value = process.env.HTTP_ONESHOT
  return value !== undefined && OFF.test(value.trim())
}

function reportWanted () {
  const value = process.env.HTTP_ONESHOT_REPORT
  return value !== undefined && value.trim() !== '' && !OFF.test(value.trim())
}

module.exports = { disabledByEnv, reportWanted }
