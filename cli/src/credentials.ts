// credentials.yaml: per-profile secrets, kept apart from config.yaml so the config can be shared or
// printed without leaking a token. The file is always 0600; a looser one (copied in by hand, or
// restored from a backup) is tightened when svcctl next reads or writes it.
//
//   profiles:
//     default:
//       token: svc_pat_...
//
// The sign-in commands store their session here too: the SDK's SessionTokens (createSessionClient's
// onTokens) as token, refresh_token, session_id and elevated_until (session-store.ts).
import { chmod, stat } from 'node:fs/promises';
import { configDir, credentialsFile } from './config-dir.js';
import { CliError } from './errors.js';
import { readYamlFile, writeYamlFile, type YamlDocument } from './yaml-file.js';

export const CREDENTIALS_MODE = 0o600;

export interface Credentials {
  /** Sent as `Authorization: Bearer`: a personal API token or a session's access token. */
  token?: string;
  /** `svc_rt_...`, single use: replace it with each refresh's successor at once. */
  refresh_token?: string;
  /** The session family, stable across refreshes. */
  session_id?: string;
  /** Until when `token` is elevated (`svcctl sudo elevate`); absent when it is not. */
  elevated_until?: string;
  [key: string]: unknown;
}

export async function readCredentials(
  profile: string,
  dir: string = configDir(),
): Promise<Credentials | undefined> {
  const entry = profilesIn(await readCredentialsDocument(dir), dir)[profile];
  if (entry === undefined || entry === null) return undefined;
  if (typeof entry !== 'object' || Array.isArray(entry)) {
    throw new CliError(`${credentialsFile(dir)}: profiles.${profile} must be a mapping`);
  }
  return entry as Credentials;
}

/** Stores a profile's credentials, or with `null` forgets them. */
export async function writeCredentials(
  profile: string,
  creds: Credentials | null,
  dir: string = configDir(),
): Promise<void> {
  const doc = (await readCredentialsDocument(dir)) ?? {};
  const profiles = { ...profilesIn(doc, dir) };
  if (creds === null) delete profiles[profile];
  else profiles[profile] = creds;
  doc.profiles = profiles;
  await writeYamlFile(credentialsFile(dir), doc, CREDENTIALS_MODE);
}

/** Names of the profiles that hold credentials. */
export async function credentialProfiles(dir: string = configDir()): Promise<string[]> {
  return Object.keys(profilesIn(await readCredentialsDocument(dir), dir));
}

async function readCredentialsDocument(dir: string): Promise<YamlDocument | undefined> {
  const file = credentialsFile(dir);
  await tightenMode(file);
  return readYamlFile(file);
}

async function tightenMode(file: string): Promise<void> {
  try {
    const { mode } = await stat(file);
    if ((mode & 0o077) !== 0) await chmod(file, CREDENTIALS_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function profilesIn(doc: YamlDocument | undefined, dir: string): Record<string, unknown> {
  const profiles = doc?.profiles ?? {};
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) {
    throw new CliError(`${credentialsFile(dir)}: "profiles" must be a mapping of profile names`);
  }
  return profiles as Record<string, unknown>;
}
