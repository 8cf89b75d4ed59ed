// The conformance run (operations.ts), shard 3 of 4.
import { conformance } from './operations.js';

conformance(2, 4);
