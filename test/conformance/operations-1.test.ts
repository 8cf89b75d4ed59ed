// The conformance run (operations.ts), shard 1 of 4.
import { conformance } from './operations.js';

conformance(0, 4);
