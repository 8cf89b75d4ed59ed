// Every kind of operation with its phases.
import { restart, start, stop } from './kinds/power.js';
import { provision } from './kinds/provision.js';
import { reinstall } from './kinds/reinstall.js';
import type { OperationDefinitions } from './run.js';

export const OPERATIONS: OperationDefinitions = {
  provision,
  reinstall,
  start,
  stop,
  restart,
} as unknown as OperationDefinitions;
