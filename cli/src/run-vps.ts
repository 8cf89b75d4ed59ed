// `svcctl vps ssh-keys set | root-password | ssh` (DECISIONS.md §8 "VPS access"): keys read from
// OpenSSH's .pub files, the root password printed once as other once-shown secrets are (run-tokens.ts),
// and the system's own ssh run against the machine's SSH server. Imported when one runs.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { ParsedInput } from './argv/spec.js';
import { CliError, UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { printSecret, secretSettings } from './run-tokens.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

function target(input: ParsedInput): { id: string; resource_id: string } {
  const [id, resourceId] = input.args;
  if (id === undefined) throw new UsageError("missing required argument 'SERVICE_ID'");
  if (resourceId === undefined) throw new UsageError("missing required argument 'RESOURCE_ID'");
  return { id, resource_id: resourceId };
}

async function readText(file: string): Promise<string> {
  try {
    if (file !== '-') return await readFile(file, 'utf8');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** Every key line of the files (a .pub file, or an authorized_keys file: blank and # lines skipped). */
export async function keysOfFiles(files: readonly string[]): Promise<{ public_key: string }[]> {
  const keys: { public_key: string }[] = [];
  for (const file of files) {
    const lines = (await readText(file)).split(/\r?\n/).map((l) => l.trim());
    const found = lines.filter((l) => l !== '' && !l.startsWith('#'));
    if (found.length === 0) throw new UsageError(`${file} holds no public key`);
    // A private key given by mistake is refused here, before it leaves this machine.
    if (found.some((l) => l.includes('PRIVATE KEY'))) {
      throw new UsageError(`${file} is a private key: give its .pub file`);
    }
    keys.push(...found.map((public_key) => ({ public_key })));
  }
  return keys;
}

/** `vps ssh-keys set SERVICE_ID RESOURCE_ID --file F [--file F2 ...]`: the machine's keys become these. */
export async function runVpsSshKeysSet(input: ParsedInput): Promise<void> {
  const path = target(input);
  const files = (input.options.file as string[] | undefined) ?? [];
  const keys = input.options.none ? [] : await keysOfFiles(files);
  if (!input.options.none && files.length === 0) throw new UsageError('give --file (repeatable), or --none');
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  await writeResult(await client.vpsAccessSshKeysSet({ path, body: { keys } }), settings);
}

/** `vps root-password SERVICE_ID RESOURCE_ID`: a new root password, printed this once. */
export async function runVpsRootPassword(input: ParsedInput): Promise<void> {
  const path = target(input);
  const settings = await secretSettings(input);
  const client = await openClient(settings);
  const key = input.options.idempotencyKey as string | undefined;
  const answer = await client.vpsAccessRootPasswordReset({
    path,
    ...(key ? { header: { 'Idempotency-Key': key } } : {}),
  });
  await printSecret(
    settings,
    answer.password,
    answer,
    `New root password of machine ${path.resource_id}, on stdout, shown this once; it works within 5 seconds and until the next reset or reinstall.`,
  );
}

/** `vps ssh SERVICE_ID RESOURCE_ID [-- ssh args]`: the system's ssh to root at the machine's address. */
export async function runVpsSsh(input: ParsedInput): Promise<void> {
  const path = target(input);
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  const access = await client.vpsAccessGet({ path });
  if (access.host === null || access.port === null) {
    throw new CliError('the machine has no SSH address yet (no system allocation)');
  }
  // SVCCTL_SSH names another OpenSSH-compatible client (a wrapper, a path).
  const program = process.env.SVCCTL_SSH ?? 'ssh';
  // OpenSSH reads options after the destination too, so the caller's options and command both follow it.
  const args = ['-p', String(access.port), `${access.username}@${access.host}`, ...input.args.slice(2)];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(program, args, { stdio: 'inherit' });
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CliError(err.code === 'ENOENT' ? `${program} is not installed` : `${program}: ${err.message}`),
      ),
    );
    child.once('exit', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
  });
  if (code !== 0) process.exitCode = code;
}
