// Loads the SDK's generated operation index without loading the SDK itself: the command tree is
// needed for every invocation (even `--help`), the HTTP client only when a command runs.
import type { CliOperation } from './operation.js';

interface IndexModule {
  operations: Record<string, CliOperation>;
}

/**
 * Started when this module is evaluated: main.ts imports it before the modules that load commander,
 * so reading the index file overlaps commander's (synchronous) loading instead of following it.
 */
const pending = importIndex();

export function loadOperations(): Promise<CliOperation[]> {
  return pending;
}

/**
 * The index module is `generated/operations.js` beside the SDK's entry point. The SDK does not
 * export that subpath (yet), so it is found from the entry's resolved location; should the layout
 * ever change, the whole SDK is loaded instead, which is slower but equally correct.
 */
async function importIndex(): Promise<CliOperation[]> {
  let mod: IndexModule;
  try {
    mod = (await import(
      new URL('./generated/operations.js', import.meta.resolve('@svcplatform/sdk')).href
    )) as IndexModule;
  } catch {
    mod = (await import('@svcplatform/sdk')) as unknown as IndexModule;
  }
  return Object.values(mod.operations);
}
