// The caller matrix (caller-matrix.ts), shard 2 of 4.
import { callerMatrix } from './caller-matrix.js';

callerMatrix(1, 4);
