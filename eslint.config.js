'use strict'

const neostandard = require('neostandard')

module.exports = [
  ...neostandard({ ignores: ['build/**', 'coverage/**', '.tap/**', 'test/c/**'] }),
  {
    rules: {
      'n/prefer-node-protocol': 'error'
    }
  }
]
