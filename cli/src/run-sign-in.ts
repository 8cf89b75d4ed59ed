// `svcctl login`, `svcctl logout` and what `svcctl sessions delete` does to this profile's own
// session. Imported when one of them runs.
import { isSvcApiError, type components, type SessionTokens } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { readCredentials } from './credentials.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { Prompter } from './prompt.js';
import { openSessionClient } from './sdk-client.js';
import { forgetCredentials, readSession, sessionOf } from './session-store.js';
import { resolveSettings, type Settings } from './settings.js';
import { CODE_PATTERN, printJson, readEmailAndPassword, say } from './sign-in-input.js';

type Session = components['schemas']['Session'];

export interface LoginOptions {
  /** `--provider ID`: the OAuth browser flow instead (run-oauth-login.ts). */
  provider?: string;
  email?: string;
  password?: string;
  passwordStdin?: boolean;
  code?: string;
  challengeId?: string;
  captchaToken?: string;
  nonInteractive?: boolean;
}

/** How often a mistyped code is asked again on a terminal; the server burns a code after 5. */
const CODE_TRIES = 3;

export async function runLogin(input: ParsedInput): Promise<void> {
  const opts = input.options as LoginOptions;
  const globals = input.globals as GlobalFlags;
  const interactive = opts.nonInteractive !== true;
  if (opts.provider !== undefined) {
    if (opts.email !== undefined || opts.password !== undefined || opts.passwordStdin || opts.challengeId !== undefined || opts.code !== undefined) {
      throw new UsageError('--provider signs in through the provider: give it without --email, a password, --challenge-id or --code');
    }
    const { runOAuthLogin } = await import('./run-oauth-login.js');
    await runOAuthLogin(input);
    return;
  }
  if (
    opts.challengeId !== undefined &&
    (opts.email !== undefined || opts.password !== undefined || opts.passwordStdin)
  ) {
    throw new UsageError(
      '--challenge-id finishes a sign-in already started: give it with --code, without --email or a password',
    );
  }
  if (opts.code !== undefined && opts.challengeId === undefined) {
    throw new UsageError(
      '--code needs --challenge-id: a code belongs to the sign-in that had it sent (the first step prints {"challenge_id": ...})',
    );
  }
  if (!interactive && opts.challengeId !== undefined && opts.code === undefined) {
    throw new UsageError('--non-interactive --challenge-id needs --code');
  }
  const code = opts.code?.replace(/\s+/g, '');
  if (code !== undefined && !CODE_PATTERN.test(code))
    throw new UsageError('--code must be the 6 digits from the email');

  const settings = await resolveSettings(globals);
  const prompter = new Prompter();
  try {
    const previous = await readSession(settings.profile, settings.configDir);
    const client = await openSessionClient(settings, null, { claim: true });
    let challengeId = opts.challengeId;
    let email: string | undefined;
    if (challengeId === undefined) {
      const credentials = await readEmailAndPassword(prompter, settings, opts, { interactive });
      email = credentials.email;
      const { password } = credentials;
      const challenge = await client.login(
        email,
        password,
        opts.captchaToken ? { captchaToken: opts.captchaToken } : {},
      );
      challengeId = challenge.challenge_id;
      if (!interactive) {
        // The first of two steps: the script fetches the code and runs --challenge-id ID --code CODE.
        printJson(settings, { challenge_id: challenge.challenge_id, status: challenge.status });
        return;
      }
    }

    let session: Session;
    if (code !== undefined) session = await client.verifyCode(challengeId, code);
    else
      session = await verifyPrompted(prompter, settings, challengeId, email, (c) =>
        client.verifyCode(challengeId, c),
      );

    // verifyCode saved the pair (onTokens). The session it replaces is no use to anyone now.
    if (previous && previous.sessionId !== session.session_id) await endQuietly(settings, previous);

    const summary = { profile: settings.profile, session_id: session.session_id, user: session.user };
    if (!interactive) printJson(settings, summary);
    else if (globals.outputFormat) await writeResult(summary, settings);
    else say(settings, `Signed in as ${describeUser(session.user)} (profile "${settings.profile}").`);
  } finally {
    prompter.close();
  }
}

async function verifyPrompted(
  prompter: Prompter,
  settings: Settings,
  challengeId: string,
  email: string | undefined,
  verify: (code: string) => Promise<Session>,
): Promise<Session> {
  say(settings, `A 6-digit code was emailed${email ? ` to ${email}` : ''}; it is valid for 10 minutes.`);
  for (let attempt = 1; ; attempt += 1) {
    const retry = prompter.isTerminal && attempt < CODE_TRIES;
    const answer = await prompter.ask('Code: ');
    if (answer === null) throw new UsageError('no code given (the input ended)');
    const code = answer.replace(/\s+/g, '');
    if (!CODE_PATTERN.test(code)) {
      if (retry) {
        process.stderr.write('The code is the 6 digits from the email.\n');
        continue;
      }
      throw new UsageError('the code must be the 6 digits from the email');
    }
    try {
      return await verify(code);
    } catch (err) {
      if (!retry || !isSvcApiError(err, 'invalid-credentials')) throw err;
      process.stderr.write('That code is wrong or has expired; try again.\n');
    }
  }
}

export function describeUser(user: Session['user']): string {
  if (!user.email) return user.name;
  return user.name && user.name !== user.email ? `${user.name} <${user.email}>` : user.email;
}

/** Ends a session this profile no longer holds; it does not matter if that fails. */
export async function endQuietly(settings: Settings, session: SessionTokens): Promise<void> {
  try {
    const { createSessionClient } = await import('@svcplatform/sdk');
    const client = createSessionClient({
      baseUrl: settings.baseUrl,
      session,
      refreshAheadMs: false,
      retries: 0,
      timeoutMs: 5_000,
    });
    await client.logout();
  } catch {
    // Unreachable server or a session that had ended already: it expires on its own.
  }
}

export async function runLogout(input: ParsedInput): Promise<void> {
  // --token and SVCCTL_TOKEN do not matter here: this signs the profile's saved session out.
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const { profile, configDir: dir } = settings;
  const session = sessionOf(await readCredentials(profile, dir));
  if (!session) {
    const removed = await forgetCredentials(profile, dir);
    say(
      settings,
      removed
        ? `Removed the saved API token of profile "${profile}".`
        : `Not signed in (profile "${profile}"); nothing to do.`,
    );
    return;
  }
  // The session client ends the session with its refresh token (refreshing first if the access
  // token has run out) and forgets it here whatever the server answers; 401 means it had ended.
  const client = await openSessionClient(settings, session, { onEnded: () => undefined });
  try {
    await client.logout();
  } catch (err) {
    await forgetCredentials(profile, dir, session.sessionId);
    say(
      settings,
      `Signed out here (profile "${profile}"), but the server could not be told: the session stays valid there until it expires or is ended elsewhere (svcctl sessions delete ${session.sessionId}).`,
    );
    throw err;
  }
  await forgetCredentials(profile, dir, session.sessionId);
  say(settings, `Signed out (profile "${profile}").`);
}

/** After `svcctl sessions delete ID`: if ID was this profile's session, its credentials are dead. */
export async function afterSessionDelete(input: ParsedInput): Promise<void> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const [sessionId] = input.args;
  if (!settings.session || sessionId === undefined) return;
  if (settings.session.sessionId.toLowerCase() !== sessionId.toLowerCase()) return;
  if (await forgetCredentials(settings.profile, settings.configDir, settings.session.sessionId)) {
    say(
      settings,
      `That was the session of profile "${settings.profile}": signed out, its saved credentials were removed.`,
    );
  }
}
