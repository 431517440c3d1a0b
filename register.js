'use strict'

// `node -r http-oneshot/register app.js`: installs the shim before the app
// loads. HTTP_ONESHOT=0 leaves Node untouched.
require('./lib/index.js').install()
