#!/usr/bin/env node
// svcctl's bin (package.json "bin"). It is committed, so it exists when `npm ci` links the workspace's
// bins: npm links no bin whose file is missing, and `npx svcctl` then asks the npm registry for a
// package of that name. The program itself is dist/svcctl.cjs (scripts/build.mjs: the CLI and the SDK
// in one CommonJS file, for start-up time), loaded from here.
//
// In a checkout (src/ beside dist/), svcctl is bundled first from its and the SDK's sources (about a
// second, build-checkout.cjs) when the bundle is missing or older than their sources: on the first run
// after `npm ci`, after a pull, after an edit. The check
// stats the source files (under a millisecond); an installed package has no src/ and checks nothing.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose: it starts faster */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

if (existsSync(join(__dirname, '..', 'src'))) require('./build-checkout.cjs').buildForRun();
require('../dist/svcctl.cjs');
