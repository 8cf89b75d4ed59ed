// `svcctl sudo setup|elevate|exit` and `svcctl sudo totp enroll|verify`: elevating the saved session.
// Imported when one of them runs.
//
// The SDK's session client holds the access token these operations answer (and reports it through
// onTokens, which saves it with its elevated_until in credentials.yaml: sdk-client.ts), so later
// commands send the elevated token and refreshes carry the elevation over while it lasts. Tokens are
// never printed, except when the token in use is not a saved session (--token, SVCCTL_TOKEN, an API
// token): there is nowhere to save the new one then, so it is the answer.
import { isSvcApiError, type components, type SessionClient, type SvcClient } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { Prompter } from './prompt.js';
import { isSessionClient, openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings, type Settings } from './settings.js';
import { CODE_PATTERN, printJson, readSecret, say } from './sign-in-input.js';

type TotpEnrollOptions = components['schemas']['TotpEnrollOptions'];
/** ElevatedToken, or PlainToken (`sudo exit`). */
type TokenAnswer = { token: string; elevated_until?: string };

const PIN_PATTERN = /^\d{6}$/;
/** How often a wrong PIN or code is asked again on a terminal; every try counts against 5 per 15 minutes. */
const TRIES = 3;

export interface PinOptions {
  pin?: string;
  pinStdin?: boolean;
  nonInteractive?: boolean;
}

export interface CodeOptions {
  code?: string;
  nonInteractive?: boolean;
}

async function withPrompter<T>(fn: (prompter: Prompter) => Promise<T>): Promise<T> {
  const prompter = new Prompter();
  try {
    return await fn(prompter);
  } finally {
    prompter.close();
  }
}

async function signedIn(input: ParsedInput): Promise<Settings> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  return settings;
}

/** `sudo setup` (a new PIN, asked twice on a terminal) and `sudo elevate` (the PIN). */
export async function runSudoPin(input: ParsedInput, which: 'setup' | 'elevate'): Promise<void> {
  const opts = input.options as PinOptions;
  const settings = await signedIn(input);
  const interactive = opts.nonInteractive !== true;
  const prompted = opts.pin === undefined && opts.pinStdin !== true;
  await withPrompter(async (prompter) => {
    const readPin = async () => {
      const pin = await readSecret(prompter, settings, {
        interactive,
        value: opts.pin,
        flag: '--pin',
        fromStdin: opts.pinStdin,
        stdinFlag: '--pin-stdin',
        question: which === 'setup' ? 'New PIN (6 digits): ' : 'PIN: ',
        ...(which === 'setup' ? { repeat: 'Repeat the PIN: ' } : {}),
        what: 'PIN',
      });
      const digits = pin.replace(/\s+/g, '');
      if (!PIN_PATTERN.test(digits)) throw new UsageError('the PIN must be 6 digits');
      return digits;
    };
    const client = await openClient(settings);
    const send = (pin: string) =>
      which === 'setup' ? client.sudoSetup({ body: { pin } }) : client.sudoElevate({ body: { pin } });
    let answer: TokenAnswer;
    for (let attempt = 1; ; attempt += 1) {
      const pin = await readPin();
      try {
        answer = await send(pin);
        break;
      } catch (err) {
        // A mistyped PIN is asked again on a terminal; the server says no more than "wrong".
        const again = which === 'elevate' && prompted && prompter.isTerminal && attempt < TRIES;
        if (!again || !isSvcApiError(err, 'invalid-field-value')) throw err;
        process.stderr.write('That PIN is wrong; try again.\n');
      }
    }
    await report(input, settings, client, answer);
  });
}

/** `sudo totp verify`: elevates with the authenticator app's current code. */
export async function runTotpVerify(input: ParsedInput): Promise<void> {
  const opts = input.options as CodeOptions;
  const settings = await signedIn(input);
  const code = codeOption(opts.code);
  if (code === undefined && opts.nonInteractive) throw new UsageError('--non-interactive needs --code');
  await withPrompter(async (prompter) => {
    const client = await openClient(settings);
    const verify = (c: string) => client.sudoTotpVerify({ body: { code: c } });
    const answer = code !== undefined ? await verify(code) : await askCode(prompter, verify);
    await report(input, settings, client, answer);
  });
}

/**
 * `sudo totp enroll`: a new pending secret shown as an otpauth URL (and a QR code on a terminal), then
 * the app's code finishes the enrollment and elevates. `--code` finishes a pending one without
 * starting another; `--non-interactive` without it prints the secret as JSON and stops there.
 */
export async function runTotpEnroll(input: ParsedInput): Promise<void> {
  const opts = input.options as CodeOptions;
  const settings = await signedIn(input);
  const code = codeOption(opts.code);
  await withPrompter(async (prompter) => {
    const client = await openClient(settings);
    const enroll = (c: string) => client.sudoTotpEnroll({ body: { code: c } });
    if (code !== undefined) return report(input, settings, client, await enroll(code));
    const pending = await client.sudoTotpEnrollOptions();
    if (opts.nonInteractive) {
      // The first of two steps: the script adds the secret to its authenticator, then --code CODE.
      printJson(settings, pending);
      return;
    }
    await showSecret(pending);
    return report(input, settings, client, await askCode(prompter, enroll));
  });
}

/** `sudo exit`: the un-elevated token the server answers replaces the elevated one. */
export async function runSudoExit(input: ParsedInput): Promise<void> {
  const settings = await signedIn(input);
  const client = await openClient(settings);
  await report(input, settings, client, await client.sudoExit());
}

function codeOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const code = value.replace(/\s+/g, '');
  if (!CODE_PATTERN.test(code))
    throw new UsageError('--code must be the 6 digits your authenticator app shows');
  return code;
}

/** Asks for the app's code; on a terminal a mistyped or refused one is asked again. */
async function askCode<T>(prompter: Prompter, attempt: (code: string) => Promise<T>): Promise<T> {
  for (let n = 1; ; n += 1) {
    const retry = prompter.isTerminal && n < TRIES;
    const answer = await prompter.ask('Code from your authenticator app: ');
    if (answer === null) throw new UsageError('no code given (the input ended)');
    const code = answer.replace(/\s+/g, '');
    if (!CODE_PATTERN.test(code)) {
      if (retry) {
        process.stderr.write('The code is the 6 digits your authenticator app shows.\n');
        continue;
      }
      throw new UsageError('the code must be the 6 digits your authenticator app shows');
    }
    try {
      return await attempt(code);
    } catch (err) {
      if (!retry || !isSvcApiError(err, 'invalid-field-value')) throw err;
      process.stderr.write('That code is wrong or was used already; try the next one.\n');
    }
  }
}

/** What the person adds to the authenticator app, on stderr with the prompts; the QR code on a terminal. */
async function showSecret(pending: TotpEnrollOptions): Promise<void> {
  const lines = [
    'Add this account to your authenticator app: scan the QR code, or open the otpauth URL, or type the secret in.',
  ];
  if (process.stderr.isTTY) {
    // Loaded here: qrcode is needed by this command only (and kept out of the bundle, like yaml).
    const { default: qrcode } = await import('qrcode');
    lines.push('', (await qrcode.toString(pending.otpauth_url, { type: 'terminal', small: true })).trimEnd());
  }
  lines.push(
    '',
    `  URL:     ${pending.otpauth_url}`,
    `  secret:  ${pending.secret}`,
    `  account: ${pending.account} (${pending.issuer})`,
    '',
    'The secret is kept for 5 minutes, until you enter a code from the app.',
  );
  process.stderr.write(`${lines.join('\n')}\n`);
}

/**
 * What an elevation (or sudo exit) prints. The session client holds the new token and has saved it;
 * the summary names the profile and until when it is elevated (null: not elevated).
 */
async function report(
  input: ParsedInput,
  settings: Settings,
  client: SvcClient | SessionClient,
  answer: TokenAnswer,
): Promise<void> {
  if (!isSessionClient(client)) {
    say(
      settings,
      `The new access token is printed, not saved: the token in use came from ${settings.tokenSource} and is sent as given.`,
    );
    await writeResult(answer, settings);
    return;
  }
  const until = client.tokens()?.elevatedUntil ?? null;
  const summary = { profile: settings.profile, elevated_until: until };
  const { nonInteractive } = input.options as { nonInteractive?: boolean };
  if (nonInteractive) printJson(settings, summary);
  else if ((input.globals as GlobalFlags).outputFormat) await writeResult(summary, settings);
  else if (until) {
    say(
      settings,
      `Elevated until ${until} (profile "${settings.profile}"): svcctl sends the elevated token until then.`,
    );
  } else say(settings, `Not elevated any more (profile "${settings.profile}").`);
}
