// The effective settings of one run. Precedence, highest first: command-line flag, environment
// variable, the profile in config.yaml / credentials.yaml, built-in default.
import type { SessionTokens } from '@svcplatform/sdk';
import { configDir, type Env } from './config-dir.js';
import { readProfileConfig } from './config-file.js';
import { readCredentials } from './credentials.js';
import { CliError, UsageError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { sessionOf } from './session-store.js';
import { OUTPUT_FORMATS, type GlobalFlags, type OutputFormat } from './global-options.js';

/** DECISIONS.md §5: the server listens on 127.0.0.1:8080 unless told otherwise. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface Settings {
  profile: string;
  /** Without the /api/v2 prefix and without a trailing slash. */
  baseUrl: string;
  token: string | undefined;
  /** Where the token came from, for `svcctl config get`; never the token itself. */
  tokenSource: '--token' | 'SVCCTL_TOKEN' | 'credentials.yaml' | null;
  /**
   * The profile's signed-in session (`svcctl login`) when the token comes from credentials.yaml and
   * is one; requests then go through the SDK's session client, which refreshes it. Null otherwise:
   * a token given with --token or SVCCTL_TOKEN, or a saved API token, is sent as it is.
   */
  session: SessionTokens | null;
  outputFormat: OutputFormat;
  quiet: boolean;
  configDir: string;
}

export interface SettingsContext {
  env?: Env;
  stdoutIsTTY?: boolean;
}

export function resolveProfile(flags: GlobalFlags, env: Env = process.env): string {
  return flags.profile || env.SVCCTL_PROFILE || 'default';
}

export async function resolveSettings(flags: GlobalFlags, ctx: SettingsContext = {}): Promise<Settings> {
  const env = ctx.env ?? process.env;
  const dir = configDir(env);
  const profile = resolveProfile(flags, env);
  const stored = await readProfileConfig(dir, profile);
  const saved = flags.token || env.SVCCTL_TOKEN ? undefined : await readCredentials(profile, dir);
  const [token, tokenSource] = flags.token
    ? [flags.token, '--token' as const]
    : env.SVCCTL_TOKEN
      ? [env.SVCCTL_TOKEN, 'SVCCTL_TOKEN' as const]
      : [stringOrUndefined(saved?.token), 'credentials.yaml' as const];
  return {
    profile,
    baseUrl: normalizeBaseUrl(flags.baseUrl || env.SVCCTL_BASE_URL || stored.base_url || DEFAULT_BASE_URL),
    token: token || undefined,
    tokenSource: token ? tokenSource : null,
    session: sessionOf(saved),
    outputFormat:
      flags.outputFormat ??
      envFormat(env) ??
      stored.output ??
      defaultFormat(ctx.stdoutIsTTY ?? process.stdout.isTTY),
    quiet: flags.quiet === true,
    configDir: dir,
  };
}

/** For commands that need a signed-in caller: without any token the server would only refuse them. */
export function requireSignIn(settings: Settings): void {
  if (settings.token) return;
  throw new CliError(
    `not signed in (profile "${settings.profile}"): run '${loginCommand(settings.profile)}', or give an API token with --token or SVCCTL_TOKEN`,
    ExitCode.auth,
  );
}

/** How to sign this profile in again: `svcctl login`, or `svcctl login --profile bob` for another. */
export function loginCommand(profile: string): string {
  return profile === 'default' ? 'svcctl login' : `svcctl login --profile ${profile}`;
}

/** Accepts `https://host`, `https://host/` and `https://host/api/v2`; returns `https://host`. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`base URL "${raw}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`base URL "${raw}" must use http or https`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/api\/v2$/, '')}`;
}

export function defaultFormat(stdoutIsTTY: boolean | undefined): OutputFormat {
  return stdoutIsTTY ? 'table' : 'json';
}

function envFormat(env: Env): OutputFormat | undefined {
  const v = env.SVCCTL_OUTPUT;
  if (!v) return undefined;
  if (!OUTPUT_FORMATS.includes(v as OutputFormat)) {
    throw new UsageError(`SVCCTL_OUTPUT must be one of ${OUTPUT_FORMATS.join(', ')}; got "${v}"`);
  }
  return v as OutputFormat;
}

function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
