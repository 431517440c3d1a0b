'use strict'

// OpenTelemetry as an application sets it up for production, for
// benchmark/agents.js: the Node SDK with the http, express and fastify
// instrumentations, its spans batched and exported as OTLP (protobuf over
// HTTP) to the endpoint OTEL_EXPORTER_OTLP_TRACES_ENDPOINT names (the
// benchmark's local sink). Loaded with `-r` before or after register.js.

const { NodeSDK } = require('@opentelemetry/sdk-node')
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http')
const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express')
const { FastifyOtelInstrumentation } = require('@fastify/otel')

const sdk = new NodeSDK({
  serviceName: 'http-oneshot-bench',
  resourceDetectors: [],
  instrumentations: [
    new HttpInstrumentation(),
    new ExpressInstrumentation(),
    new FastifyOtelInstrumentation({ registerOnInitialization: true })
  ]
})
sdk.start()
