// Runs the built svcctl as a child process with a clean environment: a temporary HOME and config
// directory, never the developer's own, and no SVCCTL_* variables leaking in from the shell.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BIN } from './build.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
}

export interface CliRun {
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. */
  input?: string | Buffer;
  cwd?: string;
}

// A test here runs svcctl as a new process per command (a dozen or more per test), each paying a Node
// start; with test files running side by side on two cores that alone can pass a minute. Test files
// share their worker (isolate: false), so this is set for each e2e file by test/support/each-file.ts,
// never once at this module's first import.
export const CLI_TEST_TIMEOUT_MS = 180_000;

const created: string[] = [];

/** Removes the temporary directories made so far: after each test file (test/support/each-file.ts). */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function tempDir(prefix = 'svcctl-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** A fresh HOME with the config directory inside it. */
export function tempHome(): { HOME: string; SVCCTL_CONFIG_DIR: string } {
  const home = tempDir('svcctl-home-');
  return { HOME: home, SVCCTL_CONFIG_DIR: join(home, 'svcctl-config') };
}

export function runCli(args: readonly string[], run: CliRun = {}): Promise<CliResult> {
  return runCliAt(CLI_BIN, args, run);
}

/** Runs the bin at `bin` (a packed copy, say) the same way. */
export function runCliAt(bin: string, args: readonly string[], run: CliRun = {}): Promise<CliResult> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const [k, v] of Object.entries({ ...tempHome(), ...run.env })) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env,
      cwd: run.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        stdout: stdoutBytes.toString('utf8'),
        stdoutBytes,
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(run.input ?? '');
  });
}

/** A loopback port nothing listens on: bound once, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}
