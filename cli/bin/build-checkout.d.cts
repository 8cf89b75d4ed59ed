// Types of build-checkout.cjs, for the CLI's tests (test/support/build.ts).
export interface BuildOptions {
  /** False: the SDK only. Default true: the SDK and svcctl's bundle. */
  cli?: boolean;
  /** Collect the builds' output into the thrown error instead of showing it on stderr. */
  quiet?: boolean;
}
export type BuildPart = 'sdk' | 'cli';
/** Builds what is stale (under a lock shared with bin/svcctl.cjs); returns what was built. */
export function ensureBuilt(options?: BuildOptions): BuildPart[];
/** What would be built now. */
export function staleParts(options?: Pick<BuildOptions, 'cli'>): BuildPart[];
/** For bin/svcctl.cjs: builds what is stale, saying so on stderr; a failed build exits 1. */
export function buildForRun(): void;
export const REPO: string;
export const CLI_OUT: string;
export const SDK_OUT: string;
