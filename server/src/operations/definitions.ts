// Every kind of operation with its phases.
import { backup, restore } from './kinds/backup.js';
import { importOperation } from './kinds/import.js';
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
  backup,
  restore,
  import: importOperation,
} as unknown as OperationDefinitions;
