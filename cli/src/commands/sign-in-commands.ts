// `svcctl login`, `logout`, `session`, `sessions`, `password` and `signup`. Definitions only, loaded at
// every start: what they do is in run-sign-in.ts and run-password.ts, imported when one runs.
// `session` and `sessions list|delete` are the generated commands of their operations under shorter
// words.
import type { SessionClient, SvcClient } from '@svcplatform/sdk';
import { operations } from '@svcplatform/sdk/operations';
import type { CommandSpec, OptionSpec, ParsedInput, Runnable } from '../argv/spec.js';
import { argumentName, pathParameters, type CliOperation } from '../operation.js';
import type * as RunPassword from '../run-password.js';
import type * as RunSignIn from '../run-sign-in.js';
import type { OperationHooks } from './operation-command.js';

const LIST_GROUP = 'Sign-in commands:';
const OPTIONS = 'Options:';

export const option = (long: string, description: string, extra: Partial<OptionSpec> = {}): OptionSpec => ({
  long,
  key: long.slice(2).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
  group: OPTIONS,
  description,
  ...extra,
});

export const NON_INTERACTIVE = option(
  '--non-interactive',
  'never prompt: what is missing is a usage error (exit 2); for scripts',
);
const EMAIL = option('--email', 'the email address (prompted for when missing)', { value: '<email>' });
const CAPTCHA = option(
  '--captcha-token',
  'a solved captcha, sent as X-Captcha-Token, when the host asks for one',
  {
    value: '<token>',
  },
);
export const secretOptions = (flag: string, what: string, value = '<password>'): OptionSpec[] => [
  option(
    flag,
    `the ${what} (others on this machine can see it in the process list: prefer ${flag}-stdin); without either, it is asked for and not shown as you type`,
    { value },
  ),
  option(`${flag}-stdin`, `read the ${what} from the next line of stdin`),
];

function leaf<M>(
  name: string,
  summary: string,
  description: string,
  options: readonly OptionSpec[],
  load: () => Promise<M>,
  run: (module: M, input: ParsedInput) => Promise<void>,
): CommandSpec {
  return {
    name,
    summary,
    term: options.length > 0 ? `${name} [options]` : name,
    listGroup: LIST_GROUP,
    subcommands: () => [],
    runnable: () => ({
      description,
      arguments: [],
      options,
      run: async (input) => run(await load(), input),
    }),
  };
}

const signIn = () => import('../run-sign-in.js');
const password = () => import('../run-password.js');

/** A generated operation's command under other words, doing what it does, and then `after`. */
function alias(
  name: string,
  operationId: string,
  summary: string,
  after?: (module: typeof RunSignIn, input: ParsedInput) => Promise<void>,
  hooks: OperationHooks = {},
): CommandSpec {
  const op = (operations as Record<string, CliOperation>)[operationId]!;
  return {
    name,
    summary,
    term: [name, ...pathParameters(op).map((p) => `<${argumentName(op, p)}>`)].join(' '),
    listGroup: LIST_GROUP,
    subcommands: () => [],
    runnable: async (): Promise<Runnable> => {
      const { operationRunnable } = await import('./operation-command.js');
      const generated = operationRunnable(op, hooks);
      return {
        ...generated,
        description: `${generated.description}\n\nThe same as svcctl ${op.cli.join(' ')}.`,
        async run(input) {
          await generated.run(input);
          if (after) await after(await signIn(), input);
        },
      };
    },
  };
}

const LOGIN = leaf<typeof RunSignIn>(
  'login',
  'sign in with your email, password and the code emailed to you',
  [
    'Sign in: asks for your email address, then your password (not shown as you type), then the 6-digit code emailed to you, and saves the session for the profile in credentials.yaml (mode 0600). Later commands use it and refresh it as needed.',
    '',
    'For scripts, --non-interactive works in two steps: `svcctl login --non-interactive --email EMAIL --password-stdin` prints {"challenge_id": ...} once the code is sent; then `svcctl login --non-interactive --challenge-id ID --code CODE` signs in and prints the session as JSON (tokens are saved, never printed).',
    '',
    "With --provider ID (see `svcctl oauth providers`), signs in with that OpenID provider instead: prints the provider's URL and opens a browser when it can, listens on a loopback redirect (--redirect-uri, default http://127.0.0.1:8976/callback, which the server's OAUTH_REDIRECT_ALLOWLIST must name), and saves the session once the browser comes back.",
  ].join('\n'),
  [
    EMAIL,
    ...secretOptions('--password', 'password'),
    option('--challenge-id', 'finish a sign-in started earlier (the challenge_id it printed)', {
      value: '<id>',
    }),
    option('--code', 'the 6-digit code from the email; goes with --challenge-id', { value: '<code>' }),
    option('--provider', 'sign in with this OpenID provider in a browser instead (its id)', {
      value: '<id>',
    }),
    option(
      '--redirect-uri',
      'with --provider: the loopback URL to listen on (default http://127.0.0.1:8976/callback; env SVCCTL_OAUTH_REDIRECT_URI)',
      {
        value: '<url>',
      },
    ),
    option(
      '--no-browser',
      'with --provider: only print the URL, do not open a browser (env SVCCTL_NO_BROWSER)',
    ),
    CAPTCHA,
    NON_INTERACTIVE,
  ],
  signIn,
  (m, input) => m.runLogin(input),
);

const LOGOUT = leaf<typeof RunSignIn>(
  'logout',
  'sign out: end the saved session on the server and remove it here',
  "Signs the profile's session out on the server and removes its saved credentials. A session that had ended already is removed without complaint; a saved API token is simply removed.",
  [],
  signIn,
  (m, input) => m.runLogout(input),
);

const SESSIONS: CommandSpec = {
  name: 'sessions',
  summary: 'list, delete: your sessions on every device',
  term: 'sessions <command>',
  listGroup: LIST_GROUP,
  description: 'Your sessions on every device and browser: list them, or end one.',
  subcommands: () => [
    alias('list', 'meSessionsList', 'list your live sessions, this one marked current'),
    alias('delete', 'meSessionDelete', 'end one of your sessions', (m, input) => m.afterSessionDelete(input)),
  ],
};

const PASSWORD: CommandSpec = {
  name: 'password',
  summary: 'change, forgot, reset: your password',
  term: 'password <command>',
  listGroup: LIST_GROUP,
  description: 'Change your password, or set a new one through an emailed link.',
  subcommands: () => [
    leaf<typeof RunPassword>(
      'change',
      'change your password; every other session is signed out',
      [
        'Changes your password: asks for the current and the new one (not shown as you type). Every session of the account is signed out, this one too unless --keep-this-session is given.',
        '',
        'With --current-password-stdin and --new-password-stdin, the first line of stdin is the current password and the second the new one.',
      ].join('\n'),
      [
        ...secretOptions('--current-password', 'current password'),
        ...secretOptions('--new-password', 'new password'),
        option('--keep-this-session', 'keep this session signed in (every other one is signed out)'),
        NON_INTERACTIVE,
      ],
      password,
      (m, input) => m.runPasswordChange(input),
    ),
    leaf<typeof RunPassword>(
      'forgot',
      'have a link to set a new password emailed to you',
      'Emails a link to set a new password, if the address has an account (the answer is the same either way). Open the link, or give it (or the token in it) to `svcctl password reset --token LINK`.',
      [EMAIL, CAPTCHA, NON_INTERACTIVE],
      password,
      (m, input) => m.runPasswordForgot(input),
    ),
    leaf<typeof RunPassword>(
      'reset',
      'set a new password with the emailed link',
      'Sets a new password with the link `svcctl password forgot` had emailed (the whole link, or its token), and signs every session of the account out. The new password is asked for (not shown as you type) unless given.',
      [
        option('--token', 'the whole emailed link, or the token in it (token=...)', {
          value: '<token>',
          mandatory: true,
        }),
        ...secretOptions('--password', 'new password'),
        NON_INTERACTIVE,
      ],
      password,
      (m, input) => m.runPasswordReset(input),
    ),
  ],
};

const SIGNUP = leaf<typeof RunPassword>(
  'signup',
  'create an account with your email and a password',
  'Creates an account: asks for your email address and a password (not shown as you type). A link to verify the address is emailed; open it, or give it (or its token) to `svcctl auth password verify --token LINK`, then sign in with `svcctl login`.',
  [
    EMAIL,
    ...secretOptions('--password', 'password'),
    option('--name', 'your name (default: the part of the address before @)', { value: '<name>' }),
    option('--language', 'the language of your emails, e.g. en or de-AT', { value: '<tag>' }),
    CAPTCHA,
    NON_INTERACTIVE,
  ],
  password,
  (m, input) => m.runSignup(input),
);

/**
 * `svcctl session` of a saved session also says until when its token is elevated (`svcctl sudo
 * elevate`), null when it is not: as the server judges it (`sudo status`), else as the profile holds it.
 */
async function withElevation(result: unknown, client: SvcClient | SessionClient): Promise<unknown> {
  const session = client as Partial<SessionClient>;
  if (typeof session.tokens !== 'function' || typeof result !== 'object' || result === null) return result;
  const held = session.tokens()?.elevatedUntil ?? null;
  const elevatedUntil = await client.sudoStatusGet().then(
    (status) => status.elevated_until,
    () => held,
  );
  return { ...result, elevated_until: elevatedUntil };
}

export const signInCommands: readonly CommandSpec[] = [
  LOGIN,
  LOGOUT,
  alias(
    'session',
    'authSessionGet',
    'show the current session: who is signed in, and until when',
    undefined,
    { decorate: withElevation },
  ),
  SESSIONS,
  PASSWORD,
  SIGNUP,
];
