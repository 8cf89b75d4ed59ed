// The caller matrix (caller-matrix.ts), shard 4 of 4.
import { callerMatrix } from './caller-matrix.js';

callerMatrix(3, 4);
