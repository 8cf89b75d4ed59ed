// The conformance run (operations.ts), shard 4 of 4.
import { conformance } from './operations.js';

conformance(3, 4);
