'use strict'

// `node -r http-oneshot/register app.js`: installs the shim when the app
// first loads http (lib/preload.js), so the preload itself loads nothing of
// Node's HTTP stack. HTTP_ONESHOT=0 leaves Node untouched.
require('./lib/preload.js').hook()
