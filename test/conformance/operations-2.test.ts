// The conformance run (operations.ts), shard 2 of 4.
import { conformance } from './operations.js';

conformance(1, 4);
