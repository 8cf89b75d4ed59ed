// A full disk for the fault tests (issue 33): a small tmpfs mounted over a directory, so writes there
// fail with ENOSPC after `size` bytes. Needs root (mount); where mount is refused the tests that need
// it skip, saying why, rather than fail.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why a small disk cannot be made here, or null when it can (tried once, on a scratch directory). */
export const SMALL_DISK_UNAVAILABLE: string | null = (() => {
  if (process.getuid?.() !== 0) return 'a full disk is simulated with a tmpfs mount, which needs root';
  const scratch = mkdtempSync(join(tmpdir(), 'small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', scratch], { stdio: 'ignore' });
    execFileSync('umount', [scratch], { stdio: 'ignore' });
    return null;
  } catch {
    return 'mount -t tmpfs is refused on this machine';
  } finally {
    rmdirSync(scratch);
  }
})();

/** Mounts a tmpfs of `size` (mount's syntax: 1m) over `dir`; the answer unmounts it. */
export function mountSmallDisk(dir: string, size = '1m'): () => void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'ignore' });
  return () => execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
}
