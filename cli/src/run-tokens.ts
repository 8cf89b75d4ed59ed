// `svcctl tokens create`, `svcctl delegations grant` and `svcctl admin applications create |
// rotate-token`. Imported when one runs.
//
// A secret the server shows once (a personal API token, an application token) is printed on stdout
// alone, with a newline, so `TOKEN=$(svcctl tokens create ...)` captures exactly it; a note on stderr
// says what it belongs to. With -o json or -o yaml chosen (the flag, SVCCTL_OUTPUT or the profile's
// output) the whole answer is printed instead, secret included: a pipe alone does not switch to JSON
// here, as it does for other commands, since scripts capture the secret. The secret never goes to
// stderr, and into credentials.yaml only with --save-as. --quiet leaves out the note, never the secret:
// it cannot be shown again.
import type { components } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { readProfileConfig, updateProfileConfig } from './config-file.js';
import { readCredentials, writeCredentials } from './credentials.js';
import { CliError, UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { formatValue } from './output/format.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings, type Settings } from './settings.js';
import { formatGrant, type GrantRequest } from './token-grants.js';

type ApiToken = components['schemas']['ApiToken'];

export interface TokenCreateOptions {
  name: string;
  grant: GrantRequest[];
  expiresAt?: string;
  adminAuthorized?: boolean;
  saveAs?: string;
}

/** Settings whose output format is table unless json or yaml was chosen: stdout being a pipe does not count. */
export async function secretSettings(input: ParsedInput): Promise<Settings> {
  const settings = await resolveSettings(input.globals as GlobalFlags, { stdoutIsTTY: true });
  requireSignIn(settings);
  return settings;
}

/** The once-shown secret on stdout (after the note on stderr), or with json/yaml the whole answer. */
export async function printSecret(settings: Settings, secret: string, answer: unknown, note: string): Promise<void> {
  if (settings.outputFormat !== 'table') {
    process.stdout.write(await formatValue(answer, settings.outputFormat));
    return;
  }
  if (!settings.quiet) process.stderr.write(`${note}\n`);
  process.stdout.write(`${secret}\n`);
}

const list = (items: readonly string[]) => (items.length > 0 ? items.join(', ') : 'none');

function describeToken(token: ApiToken): string {
  const grants = token.authorization?.grants.map(formatGrant) ?? [];
  const expiry = token.expires_at ? `expires ${token.expires_at}` : 'never expires';
  const admin = token.admin_authorized ? '; admin-authorized' : '';
  return `API token "${token.name}" (id ${token.id}; grants ${list(grants)}${admin}; ${expiry})`;
}

/** `tokens create`: mints a personal API token; its secret is printed once, or saved with --save-as. */
export async function runTokenCreate(input: ParsedInput): Promise<void> {
  const opts = input.options as unknown as TokenCreateOptions;
  const settings = await secretSettings(input);
  // Checked before minting: a token nobody can store would only have to be revoked.
  if (opts.saveAs !== undefined) await checkProfileFree(settings, opts.saveAs);
  const client = await openClient(settings);
  const created = await client.meApiTokenCreate({
    body: {
      name: opts.name,
      authorization: { grants: opts.grant },
      ...(opts.expiresAt !== undefined ? { expires_at: opts.expiresAt } : {}),
      ...(opts.adminAuthorized ? { admin_authorized: true } : {}),
    },
  });
  if (opts.saveAs === undefined) {
    await printSecret(
      settings,
      created.secret,
      created,
      `Created ${describeToken(created.token)}.\nIts secret, on stdout, is shown this once; revoke it with: svcctl tokens revoke ${created.token.id}`,
    );
    return;
  }
  await saveToken(settings, opts.saveAs, created.secret, created.token);
  if (settings.outputFormat !== 'table') await printSecret(settings, created.secret, created, '');
  else if (!settings.quiet) {
    process.stderr.write(
      `Created ${describeToken(created.token)}.\nSaved as the token of profile "${opts.saveAs}": svcctl --profile ${opts.saveAs} ... sends it.\n`,
    );
  }
}

/** --save-as names a profile without credentials: a session or another token there is never replaced. */
async function checkProfileFree(settings: Settings, profile: string): Promise<void> {
  if (profile.trim() === '') throw new UsageError('--save-as takes a profile name');
  if ((await readCredentials(profile, settings.configDir)) !== undefined) {
    throw new UsageError(
      `profile "${profile}" holds credentials already; choose another name, or remove them first (svcctl --profile ${profile} logout)`,
    );
  }
}

async function saveToken(
  settings: Settings,
  profile: string,
  secret: string,
  token: ApiToken,
): Promise<void> {
  try {
    await writeCredentials(profile, { token: secret }, settings.configDir);
    // The token works only on the server that minted it; a profile without an address is given that one.
    if ((await readProfileConfig(settings.configDir, profile)).base_url === undefined) {
      await updateProfileConfig(settings.configDir, profile, 'base_url', settings.baseUrl);
    }
  } catch (err) {
    // The token exists now: rather than lose its secret, print it.
    process.stdout.write(`${secret}\n`);
    throw new CliError(
      `created API token ${token.id}, but could not save it for profile "${profile}" (${(err as Error).message}); its secret is printed on stdout`,
    );
  }
}

/** `delegations grant`: lets an application act for you; prints the delegation (its id is what `revoke` takes). */
export async function runDelegationGrant(input: ParsedInput): Promise<void> {
  const opts = input.options as { applicationId: string; capability: string[] };
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  await client.meDelegationGrant({
    body: { application_id: opts.applicationId, capabilities: opts.capability },
  });
  if (settings.quiet) return;
  // The grant answers 204; the delegation it made or replaced is the application's live one.
  const applicationId = opts.applicationId.toLowerCase();
  const entry = (await client.meDelegationList()).find(
    (d) => d.application.id.toLowerCase() === applicationId && d.status === 'live',
  );
  await writeResult(entry, settings);
}

/** `admin applications create`: registers an application; its token is printed once. */
export async function runApplicationCreate(input: ParsedInput): Promise<void> {
  const opts = input.options as { name: string; capability?: string[] };
  const settings = await secretSettings(input);
  const client = await openClient(settings);
  const created = await client.adminApplicationCreate({
    body: { name: opts.name, capabilities: opts.capability ?? [] },
  });
  const { application } = created;
  await printSecret(
    settings,
    created.token,
    created,
    `Registered application "${application.name}" (id ${application.id}; capabilities ${list(application.capabilities)}).\nIts token, on stdout, is shown this once; a new one: svcctl admin applications rotate-token ${application.id}`,
  );
}

/** `admin applications rotate-token ID`: a new token, printed once; the previous one stops working. */
export async function runApplicationTokenRotate(input: ParsedInput): Promise<void> {
  const [id] = input.args;
  if (id === undefined) throw new UsageError("missing required argument 'APPLICATION_ID'");
  const settings = await secretSettings(input);
  const client = await openClient(settings);
  const answer = await client.adminApplicationTokenRotate({ path: { id } });
  await printSecret(
    settings,
    answer.token,
    answer,
    `New token of application ${id}, on stdout, shown this once; the previous token stopped working.`,
  );
}
