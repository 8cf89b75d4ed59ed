// The SDK's generated operation index, without the SDK itself: the command tree is needed for every
// invocation (even `--help`), the HTTP client only when a command runs. The `./operations` subpath
// is the index module alone.
import { operations } from '@svcplatform/sdk/operations';
import type { CliOperation } from './operation.js';

export function loadOperations(): readonly CliOperation[] {
  return Object.values(operations as Record<string, CliOperation>);
}
