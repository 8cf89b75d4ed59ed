// The caller matrix (caller-matrix.ts), shard 1 of 4.
import { callerMatrix } from './caller-matrix.js';

callerMatrix(0, 4);
