// Every kind of operation with its phases.
import { provision } from './kinds/provision.js';
import { reinstall } from './kinds/reinstall.js';
import type { OperationDefinitions } from './run.js';

export const OPERATIONS: OperationDefinitions = { provision, reinstall } as unknown as OperationDefinitions;
