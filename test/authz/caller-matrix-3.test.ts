// The caller matrix (caller-matrix.ts), shard 3 of 4.
import { callerMatrix } from './caller-matrix.js';

callerMatrix(2, 4);
