// What the system says about a process. A pid alone is no identity: it is reused once its process is
// gone, so "is the unit running" asks whether the pid still runs that unit's agent (its command line
// names the unit directory). Where there is no /proc (macOS), a live pid has to do.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

const HAS_PROC = existsSync('/proc/self/cmdline');

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the pid is someone else's process, alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` is alive and one of its arguments is exactly `arg`. */
export async function runsWithArg(pid: number, arg: string): Promise<boolean> {
  if (!pidAlive(pid)) return false;
  if (!HAS_PROC) return true;
  try {
    // A zombie's cmdline is empty: it counts as gone, as it should.
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').includes(arg);
  } catch {
    return false;
  }
}

/** The process group of `pid`; null when it is gone (or a zombie); undefined where the system cannot say. */
export async function processGroup(pid: number): Promise<number | null | undefined> {
  if (!HAS_PROC) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return null;
    const group = Number(fields[2]);
    return Number.isInteger(group) ? group : null;
  } catch {
    return null;
  }
}

/**
 * Sends a signal; a process already gone is fine, and so is one we may not signal (EPERM: it is not
 * ours, so it is not one of the units).
 */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') throw err;
  }
}

/** Signals every process of a group; refuses the groups that would mean "everyone" or "us". */
export function signalGroup(group: number, sig: NodeJS.Signals): void {
  if (!Number.isInteger(group) || group <= 1) throw new Error(`refusing to signal process group ${group}`);
  signal(-group, sig);
}

/** Polls `done` until it holds or `timeoutMs` passes; answers whether it held. */
export async function waitUntil(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
