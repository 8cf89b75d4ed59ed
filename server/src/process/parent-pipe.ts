// A child program of `npm start` (the edge, the gateway) must not outlive it, even when the parent is
// killed with SIGKILL and runs no handler. The parent hands the child a pipe as stdin and never writes
// to it; the kernel closes it when the parent dies however it dies, and the child stops on that end.
import type { SpawnOptions } from 'node:child_process';

/** The argument a parent adds to a child's command line so that the child watches its stdin. */
export const WITH_PARENT_ARG = '--with-parent';

/** The stdio of such a child: stdin the pipe, output shared with the parent. */
export const CHILD_STDIO: SpawnOptions['stdio'] = ['pipe', 'inherit', 'inherit'];

/** In the child: calls `stop` once the parent is gone (started with WITH_PARENT_ARG; else nothing). */
export function stopWithParent(stop: (reason: string) => void): void {
  if (!process.argv.includes(WITH_PARENT_ARG)) return;
  const gone = () => stop('parent exited');
  process.stdin.once('end', gone);
  process.stdin.once('error', gone);
  process.stdin.resume();
}
