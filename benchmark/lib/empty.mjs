// Nothing: benchmark/startup.js imports it to measure what `--import` costs Node.
