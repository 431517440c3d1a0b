// Experiment: a writeHead wrapper put on before the package, as Elastic APM's.
const http = require('node:http')
const P = http.ServerResponse.prototype
const orig = P.writeHead
P.writeHead = function writeHead () { return orig.apply(this, arguments) }
