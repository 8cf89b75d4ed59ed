// The CLI tests run the built binary, as users do. Builds the SDK and svcctl when their sources are
// newer than their output, with the same check and the same lock as the bin (bin/build-checkout.cjs),
// so parallel test files and a `npx svcctl` in another shell never build at once.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt as buildStale } from '../../bin/build-checkout.cjs';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** The program; tests run it directly (the bin, bin/svcctl.cjs, loads it; e2e/fresh-clone.test.ts runs that). */
export const CLI_BIN = join(REPO, 'cli/dist/svcctl.cjs');

export function ensureBuilt(): void {
  buildStale({ quiet: true });
}

/** For unit tests of modules that import the SDK: svcctl resolves it to its built dist/. */
export function ensureSdkBuilt(): void {
  buildStale({ cli: false, quiet: true });
}
