#!/usr/bin/env node
import { main } from './main.js';

// `svcctl ... | head` closes the pipe early: that is the reader's choice, not a failure to report.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(process.exitCode ?? 0);
});

// exitCode, not exit(): pending writes to a piped stdout are flushed before the process ends. (No
// top-level await: the build bundles this file as CommonJS, see scripts/build.mjs.)
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
