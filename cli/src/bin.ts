#!/usr/bin/env node
import { main } from './main.js';

// exitCode, not exit(): pending writes to a piped stdout are flushed before the process ends.
process.exitCode = await main(process.argv.slice(2));
