// `imports start` and `imports cancel` (the generated `imports list` and `imports show` need nothing more):
// the remote's password asked for unseen, or read from a line of stdin, never taken as an argument's only
// copy; --wait follows the import's operation to its end.
import type { ParsedInput } from './argv/spec.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { Prompter } from './prompt.js';
import { idempotencyKey, startOnce, waitForEnd } from './run-services.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';
import { readSecret } from './sign-in-input.js';

export interface ImportStartOptions {
  host: string;
  port?: string;
  username: string;
  password?: string;
  passwordStdin?: boolean;
  remotePath?: string;
  deleteExtraneous?: boolean;
  nonInteractive?: boolean;
  wait?: boolean;
  idempotencyKey?: string;
}

/** `imports start SERVICE_ID --host H --username U [--port P] [--remote-path P] [--delete-extraneous] [--wait]`. */
export async function runImportStart(input: ParsedInput): Promise<void> {
  const [id] = input.args as [string];
  const opts = input.options as unknown as ImportStartOptions;
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const prompter = new Prompter();
  let password: string;
  try {
    password = await readSecret(prompter, settings, {
      interactive: opts.nonInteractive !== true,
      value: opts.password,
      flag: '--password',
      fromStdin: opts.passwordStdin,
      stdinFlag: '--password-stdin',
      question: `Password of ${opts.username}@${opts.host}: `,
      what: 'password',
    });
  } finally {
    prompter.close();
  }
  const key = idempotencyKey(opts.idempotencyKey);
  const client = await openClient(settings);
  const accepted = await startOnce(key, () =>
    client.importStart({
      path: { id },
      header: { 'Idempotency-Key': key },
      body: {
        host: opts.host,
        username: opts.username,
        password,
        ...(opts.port === undefined ? {} : { port: Number(opts.port) }),
        ...(opts.remotePath === undefined ? {} : { remote_path: opts.remotePath }),
        ...(opts.deleteExtraneous ? { delete_extraneous: true } : {}),
      },
    }),
  );
  await writeResult(accepted, settings);
  if (opts.wait) await waitForEnd(client, settings, id, accepted.operation_id);
}

/** `imports cancel SERVICE_ID IMPORT_ID [--wait]`. */
export async function runImportCancel(input: ParsedInput): Promise<void> {
  const [id, importId] = input.args as [string, string];
  const opts = input.options as { wait?: boolean };
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  const asked = await client.importCancel({ path: { id, import_id: importId } });
  await writeResult(asked, settings);
  if (opts.wait) {
    await waitForEnd(client, settings, id, asked.operation_id).catch((err: unknown) => {
      // Cancelled is what was asked for: only another end is a failure.
      if (!(err instanceof Error && / was cancelled/.test(err.message))) throw err;
    });
  }
}
