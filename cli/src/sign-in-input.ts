// What the sign-in commands read from the person or the script running them: an answer, a secret
// (hidden on a terminal, or from a flag, or a line of stdin), and how they report back.
import { UsageError } from './errors.js';
import type { Prompter } from './prompt.js';
import type { Settings } from './settings.js';

export const CODE_PATTERN = /^\d{6}$/;

/** A status line for the person on stderr; --quiet leaves it out. */
export function say(settings: Settings, text: string): void {
  if (!settings.quiet) process.stderr.write(`${text}\n`);
}

/** The machine answer of --non-interactive: JSON on stdout, whatever the output format. */
export function printJson(settings: Settings, value: unknown): void {
  if (!settings.quiet) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** An option's value, else (interactive) the answer to `question`; never empty. */
export async function valueOrAsk(
  prompter: Prompter,
  value: string | undefined,
  how: { interactive: boolean; flag: string; question: string; what: string },
): Promise<string> {
  if (value !== undefined) {
    if (value.trim() === '') throw new UsageError(`${how.flag} is empty`);
    return value.trim();
  }
  if (!how.interactive) throw new UsageError(`--non-interactive needs ${how.flag}`);
  const answer = await prompter.ask(how.question);
  if (answer === null) throw new UsageError(`no ${how.what} given (the input ended)`);
  if (answer.trim() === '') throw new UsageError(`no ${how.what} given`);
  return answer.trim();
}

export interface SecretSource {
  interactive: boolean;
  /** The value of `--password` and the like. */
  value: string | undefined;
  /** `--password`. */
  flag: string;
  /** Whether `--password-stdin` (`stdinFlag`) was given: the next line of stdin is the secret. */
  fromStdin: boolean | undefined;
  stdinFlag: string;
  /** `Password: `. */
  question: string;
  /** A new password is asked twice on a terminal, to catch a typo nobody saw. */
  repeat?: string;
  /** `password`, for messages. */
  what: string;
}

/** A password, from its flag, a line of stdin, or a hidden prompt; never empty, taken as given. */
export async function readSecret(
  prompter: Prompter,
  settings: Settings,
  source: SecretSource,
): Promise<string> {
  const { flag, stdinFlag, what } = source;
  if (source.value !== undefined && source.fromStdin) {
    throw new UsageError(`give ${flag} or ${stdinFlag}, not both`);
  }
  let secret: string | null;
  if (source.value !== undefined) {
    if (!settings.quiet) {
      process.stderr.write(
        `warning: ${flag} shows the ${what} to other users of this machine (process list, shell history); prefer ${stdinFlag}\n`,
      );
    }
    secret = source.value;
  } else if (source.fromStdin) {
    // On a terminal the line is still typed unseen.
    secret = prompter.isTerminal ? await prompter.askHidden('') : await prompter.readLine();
    if (secret === null) throw new UsageError(`${stdinFlag}: stdin ended before a line with the ${what}`);
  } else if (!source.interactive) {
    throw new UsageError(`--non-interactive needs ${flag} or ${stdinFlag}`);
  } else {
    secret = await prompter.askHidden(source.question);
    if (secret === null) throw new UsageError(`no ${what} given (the input ended)`);
    if (secret !== '' && source.repeat && prompter.isTerminal) {
      const again = await prompter.askHidden(source.repeat);
      if (again !== secret) throw new UsageError(`the two ${what}s differ; nothing was changed`);
    }
  }
  if (secret === '') throw new UsageError(`the ${what} is empty`);
  return secret;
}

/** The `--email`, `--password` and `--password-stdin` options of login and signup. */
export interface CredentialOptions {
  email?: string;
  password?: string;
  passwordStdin?: boolean;
}

/** An email address and a password, from the options or asked for; `repeat` asks a new password twice. */
export async function readEmailAndPassword(
  prompter: Prompter,
  settings: Settings,
  opts: CredentialOptions,
  how: { interactive: boolean; repeat?: string },
): Promise<{ email: string; password: string }> {
  const email = await valueOrAsk(prompter, opts.email, {
    interactive: how.interactive,
    flag: '--email',
    question: 'Email: ',
    what: 'email address',
  });
  const password = await readSecret(prompter, settings, {
    interactive: how.interactive,
    value: opts.password,
    flag: '--password',
    fromStdin: opts.passwordStdin,
    stdinFlag: '--password-stdin',
    question: 'Password: ',
    ...(how.repeat !== undefined ? { repeat: how.repeat } : {}),
    what: 'password',
  });
  return { email, password };
}
