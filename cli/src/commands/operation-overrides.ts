// Generated commands that do more than send their operation: they keep the words the spec gives them
// (x-svcctl) but take their input another way or keep what the answer hands out.
//
//   me avatar set FILE          reads the file and uploads it (meAvatarUpload, multipart)
//   orgs icon set ID FILE       the same for an organization's icon (organizationIconUpload)
//   projects list [--org ID]    every project of mine (projectList), or one organization's
//                               (organizationProjectList, also `orgs projects ID`)
//   projects stats [ID]         one project's stats (projectStatsGet), or every project's
//                               (projectStatsList, whose own words `projects stats-all` are not listed)
//   discovery mark KEY...       the keys as arguments as well as --keys (meDiscoveryMark)
//   sudo setup | elevate        the PIN asked for unseen (or --pin-stdin); the elevated token is saved
//   sudo totp enroll            the secret as a QR code and otpauth URL, then the code; elevates
//   sudo totp verify            the code asked for (or --code); elevates
//   sudo exit                   saves the un-elevated token it answers
//   sudo webauthn register | authenticate   as generated (the credential comes from a browser), but
//                               the answer's token is saved, not printed
//   tokens create               --grant CAPABILITY[:SCOPE] builds the authorization; the secret alone
//                               on stdout (or saved with --save-as), what it is on stderr
//   delegations grant           --capability, repeated; prints the delegation the grant made
//   admin applications create | rotate-token   the application's token alone on stdout
//   oauth complete --key KEY    redeems the key and saves the session like `svcctl login` (run-oauth-login.ts);
//                               `oauth callback` (a browser route) is not listed
//   domains add | check         as generated; in table mode the DNS record to publish follows the claim;
//                               check exits 10 when the claim is not verified after it
//   admin resellers icon set ID FILE | og-image set ID FILE   reads the image and uploads it
//   admin captcha set HOSTNAME  as generated, plus --secret-stdin (run-admin-content.ts)
//   vps reinstall ID RESOURCE_ID --image IMAGE   --yes (or y on a terminal's prompt) sends confirm:
//                               true; an Idempotency-Key always; --wait follows the operation
//                               (run-services.ts)
//   power start | stop | restart ID   the action is the command's word (serviceInstancePower); an
//                               Idempotency-Key always; --wait follows the operation (run-services.ts)
//   backups create SERVICE_ID RESOURCE_ID   an Idempotency-Key always; --name; --wait follows the operation
//   backups restore SERVICE_ID RESOURCE_ID BACKUP_ID   asks y/N on a terminal unless --yes (required without
//                               one); an Idempotency-Key always; --wait shows the restore's phases
//   console SERVICE_ID RESOURCE_ID attaches the terminal to the workload's console through the gateway (raw
//                               mode, Ctrl-] leaves); --ticket prints the ticket (run-console.ts)
//   shell SERVICE_ID RESOURCE_ID   a shell on a PTY of the terminal's size, resized on SIGWINCH, exiting with
//                               the shell's code; --container, --ticket (run-console.ts)
//   screen SERVICE_ID RESOURCE_ID  takes the machine's screen hold, prints the screen's URL for noVNC and
//                               holds it while it runs (refreshing), releasing on exit; --force, --ticket
//                               (run-screen.ts)
//   files cat SERVICE_ID RESOURCE_ID PATH   the file's text itself on stdout (fileRead)
//   files get SERVICE_ID RESOURCE_ID PATH [LOCAL]   beside `files download-ticket`: downloads through the
//                               gateway with the ticket, a progress bar on a terminal (run-files.ts)
//   files put SERVICE_ID RESOURCE_ID LOCAL PATH   beside `files session-ticket`: uploads through the
//                               gateway with a file session, a progress bar on a terminal
//   operations wait ID OPERATION_ID   a command of its own beside the generated `operations show`
//                               (`beside`): polls until the operation ends, with a progress display
//   admin subscriptions create  as generated, plus an Idempotency-Key always and --wait for the
//                               provisioning operation of its answer
//   resources list | subscriptions resources   as generated; in table mode the resources as rows,
//                               with the primary-role inconsistency said in words
//   backups list                as generated; in table mode the backups as rows and "N of 5 backups"
//   schedules list              as generated; in table mode the schedules as rows, the next run in local
//                               time, and "N of 10 schedules"
//   metrics SERVICE_ID [--period]   as generated; in table mode each series as a chart (asciichart) with
//                               its min, max and latest
//   domains connect list        as generated; in table mode the links as rows and "N of 20 links"
//   domains connect verify      as generated, then exit 10 unless the link is active
//   auth password verify        as generated, but --token also takes the whole emailed link
//   members add                 as generated; someone already a member with another role than the one
//                               asked for is exit 6 with a sentence, not a silent success
//   sftp enable | disable ID    the account's state is the command's word (sftpUpdate): enable provisions
//                               it; `sftp rotate` (generated) prints the new password, once (run-sftp.ts)
//   imports start SERVICE_ID --host H --username U   the remote's password asked for unseen, or
//                               --password-stdin; an Idempotency-Key always; --wait follows the operation
//   imports cancel SERVICE_ID IMPORT_ID   as generated, plus --wait until it has ended (run-imports.ts)
//   game kick | ban | pardon | op | deop | gamemode | whisper | give | broadcast SERVICE_ID ...   one player
//                               action each, the kind the command's word (gameActionRun); a status other
//                               than ok is exit 10 (run-games.ts)
//   vps ssh-keys set SERVICE_ID RESOURCE_ID --file KEY.pub   the keys read from OpenSSH public key files
//                               (repeatable), or --none (run-vps.ts)
//   vps root-password SERVICE_ID RESOURCE_ID   the new password alone on stdout, once; an Idempotency-Key
//   vps ssh SERVICE_ID RESOURCE_ID [-- SSH_ARGS]   beside `vps access`: runs the system's ssh as root at
//                               the machine's SSH address, exiting with its code
//   firewall replace ID RESOURCE_ID --file rules.json   the ruleset from a JSON or YAML file holding
//                               either the array of rules or {rules: [...]}
//
// Definitions only, loaded at every start: what they do is in run-me.ts, run-orgs.ts, run-sudo.ts,
// run-tokens.ts and run-services.ts, imported when one runs. Paged lists (`audit list`) need none:
// every generated command of a paged operation takes --all (commands/operation-command.ts).
import type { SessionClient } from '@svcplatform/sdk';
import type { OptionSpec, Runnable } from '../argv/spec.js';
import type { CliOperation } from '../operation.js';
import type * as RunAdminContent from '../run-admin-content.js';
import type * as RunOAuth from '../run-oauth-login.js';
import type * as RunMe from '../run-me.js';
import type * as RunOrgs from '../run-orgs.js';
import type { Answered } from '../run-services.js';
import type * as RunServices from '../run-services.js';
import type * as RunConsole from '../run-console.js';
import type * as RunImports from '../run-imports.js';
import type * as RunFiles from '../run-files.js';
import type * as RunScreen from '../run-screen.js';
import type * as RunSftp from '../run-sftp.js';
import type * as RunGames from '../run-games.js';
import type * as RunSudo from '../run-sudo.js';
import type * as RunTokens from '../run-tokens.js';
import type * as RunVps from '../run-vps.js';
import { accumulateGrant, GRANT_SYNTAX } from '../token-grants.js';
import { fileWriteOverride } from './file-write-command.js';
import { NON_INTERACTIVE, option, secretOptions } from './sign-in-commands.js';

export interface OperationOverride {
  /** How the parent lists it, from its word: `set <file>`. Default: the generated command's. */
  readonly term?: (word: string) => string;
  /** Not listed by its parent: another command does its work (it still runs, for scripts). */
  readonly hidden?: boolean;
  /** The command, built when the command line reaches it. */
  runnable(op: CliOperation): Promise<Runnable>;
  /**
   * Commands of their own beside this one under the same parent, by word (`operations wait` beside
   * `operations show`). They are not operations of the spec; each is built on this one.
   */
  readonly beside?: Readonly<Record<string, BesideCommand>>;
}

export interface BesideCommand {
  /** One line, for the parent's listing. */
  readonly summary: string;
  /** How the parent lists it, from its word. */
  term(word: string): string;
  /** Given the operation it sits beside. */
  runnable(op: CliOperation): Promise<Runnable>;
}

const FILE = { name: 'FILE', required: true, description: 'the image file, or - for stdin' } as const;

const adminContent = () => import('../run-admin-content.js');
const domains = () => import('../run-domains.js');
const me = () => import('../run-me.js');
const oauth = () => import('../run-oauth-login.js');
const orgs = () => import('../run-orgs.js');
const services = () => import('../run-services.js');
const consoles = () => import('../run-console.js');
const imports = () => import('../run-imports.js');
const fileTransfers = () => import('../run-files.js');
const screens = () => import('../run-screen.js');
const sftp = () => import('../run-sftp.js');
const games = () => import('../run-games.js');
const sudo = () => import('../run-sudo.js');
const tokens = () => import('../run-tokens.js');
const vps = () => import('../run-vps.js');

/** A command of its own under the operation's words: its description ends with the route, as generated ones do. */
function command<M>(
  description: string,
  args: Runnable['arguments'],
  options: readonly OptionSpec[],
  load: () => Promise<M>,
  run: (module: M, op: CliOperation, input: Parameters<Runnable['run']>[0]) => Promise<void>,
  /** What it does, when that is not the operation's summary (a command `beside` it). */
  summary?: string,
): OperationOverride['runnable'] {
  return async (op) => {
    const { longDescription } = await import('./operation-command.js');
    return {
      description: `${summary ?? op.summary}. ${description}\n\n${longDescription(op).split('\n\n').slice(1).join('\n\n')}`,
      arguments: args,
      options,
      run: async (input) => run(await load(), op, input),
    };
  };
}

const CODE = option('--code', 'the 6-digit code your authenticator app shows now (asked for when missing)', {
  value: '<code>',
});
const PIN = [...secretOptions('--pin', 'PIN', '<pin>'), NON_INTERACTIVE];

/** Each occurrence adds one; the parser keeps them in order. */
const repeated = (raw: string, previous: unknown): string[] => [
  ...(Array.isArray(previous) ? (previous as string[]) : []),
  raw,
];
const CAPABILITY = (what: string, mandatory: boolean) =>
  option(
    '--capability',
    `${what} (repeatable${mandatory ? '; at least one' : ''}; see svcctl tokens capabilities)`,
    {
      value: '<name>',
      parse: repeated,
      mandatory,
    },
  );

/** How a command that prints a once-shown secret prints it (run-tokens.ts). */
const SECRET_OUTPUT = (what: string, extra = '') =>
  `Output: ${what} alone on stdout, followed by a newline, so \`X=$(svcctl ...)\` captures exactly it; a note on stderr says what it belongs to${extra}. With -o json or -o yaml (or SVCCTL_OUTPUT, or the profile's output) the whole answer is printed instead, secret included; a pipe alone does not switch to JSON here. The secret is never written to stderr; --quiet leaves out the note, not the secret, which cannot be shown again.`;

/**
 * A generated command whose answer is an elevated token: the session client holds and saves it, so
 * what is printed is until when (the token itself only when there is no saved session to put it in).
 */
const savesElevatedToken: OperationOverride = {
  async runnable(op) {
    const { operationRunnable } = await import('./operation-command.js');
    return operationRunnable(op, {
      decorate: (result, client) => {
        const session = client as Partial<SessionClient>;
        if (typeof session.tokens !== 'function') return result;
        return { elevated_until: session.tokens()?.elevatedUntil ?? null };
      },
    });
  },
};

/**
 * `domains add` and `domains check`: in table mode, the record to publish set apart under the claim.
 * `domains check` then exits 10 (ExitCode.checkFailed) unless the claim is verified after the check.
 */
const showsDomainRecord = (checks: boolean): OperationOverride => ({
  async runnable(op) {
    const { operationRunnable } = await import('./operation-command.js');
    let table = false;
    let organizationId = '';
    let claim: unknown;
    const generated = operationRunnable(op, {
      decorate: async (answer) => {
        claim = answer;
        return table ? (await domains()).claimWithRecord(answer, organizationId) : answer;
      },
    });
    return {
      ...generated,
      description: checks
        ? generated.description.replace(
            '\n\n',
            '. Prints the claim after the check; exits 0 when it is verified, else 10 with why on stderr (its status and last_error).\n\n',
          )
        : generated.description,
      run: async (input) => {
        table = await (await domains()).printsTable(input);
        organizationId = input.args[0] ?? '';
        await generated.run(input);
        if (checks) (await domains()).requireVerified(claim);
      },
    };
  },
});

/** `domains connect verify`: exits 10 (ExitCode.checkFailed) unless the check found the SRV record. */
const verifiesLink: OperationOverride = {
  async runnable(op) {
    const { operationRunnable } = await import('./operation-command.js');
    let link: unknown;
    const generated = operationRunnable(op, {
      decorate: async (answer) => {
        link = answer;
        return answer;
      },
    });
    return {
      ...generated,
      description: generated.description.replace(
        '\n\n',
        '. Prints the link after the check; exits 0 when it is active, else 10 with why on stderr (its status and last_error).\n\n',
      ),
      run: async (input) => {
        await generated.run(input);
        (await domains()).requireActiveLink(link);
      },
    };
  },
};

const WAIT_OUTPUT =
  'With --wait it then follows the operation on stderr (a progress bar on a terminal, a plain line per change such as "phase stop 10%" otherwise; none with --quiet) and exits 0 when it succeeded, 7 when it failed or was cancelled, with its error. Ctrl-C stops the waiting, not the operation: `svcctl operations wait ID OPERATION_ID` follows it again.';

const WAIT_SUMMARY = 'Wait for an operation to end, showing its progress';

const WAIT = option(
  '--wait',
  'then wait for the operation to end, showing its progress on stderr (exit 7 when it fails)',
);

const VPS_ARGS = [
  { name: 'SERVICE_ID', required: true, description: "the VPS service instance's id (uuid)" },
  { name: 'RESOURCE_ID', required: true, description: "the virtual machine's resource id (uuid)" },
] as const;

const IDEMPOTENCY_KEY = option(
  '--idempotency-key',
  'sent as Idempotency-Key (default: a new random one): running again with the same key within 24 hours answers the first answer and starts nothing new',
  { value: '<key>' },
);

const POWER_EFFECT = {
  start:
    'Starts every machine or workload of the service SERVICE_ID and waits on the platform for each to acknowledge its contract; the service then reads running.',
  stop: 'Stops every machine or workload of the service SERVICE_ID (the programs they run with them) after telling each it is being stopped; the service then reads stopped and stays so until started.',
  restart: 'Stops, then starts every machine or workload of the service SERVICE_ID.',
} as const;

/** `power start|stop|restart SERVICE_ID`: one operation, the action given by the command's word. */
function powerCommand(action: 'start' | 'stop' | 'restart', summary?: string): OperationOverride['runnable'] {
  return command<typeof RunServices>(
    [
      POWER_EFFECT[action],
      '',
      `Prints the accepted answer (operation_id, service_instance_id, action). ${WAIT_OUTPUT}`,
      '',
      'Each run sends an Idempotency-Key (a new one unless --idempotency-key gives it). Another operation holding the service is a conflict (exit 6); a suspended or ended subscription is refused (exit 5).',
    ].join('\n'),
    [{ name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" }],
    [WAIT, IDEMPOTENCY_KEY],
    services,
    (m, _op, input) => m.runPower(input, action),
    summary,
  );
}

const SFTP_EFFECT = {
  enable:
    'Allows the SFTP account of the service SERVICE_ID to sign in, provisioning it when it has none (with no password yet: `svcctl sftp rotate SERVICE_ID` sets one and shows it once).',
  disable:
    'Refuses sign-in to the SFTP account of the service SERVICE_ID at once and ends its open sessions within 2 seconds; the password is kept for a later enable.',
} as const;

/** `sftp enable|disable SERVICE_ID`: the account's state given by the command's word. */
function sftpCommand(enabled: boolean, summary?: string): OperationOverride['runnable'] {
  return command<typeof RunSftp>(
    [
      SFTP_EFFECT[enabled ? 'enable' : 'disable'],
      '',
      'Prints the account (username, host, port, enabled, password_set, host_key_fingerprint). Asking for the state the account is in changes nothing. Another change of the account at that moment is a conflict (exit 6): run it again.',
    ].join('\n'),
    [{ name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" }],
    [],
    sftp,
    (m, _op, input) => m.runSftpSwitch(input, enabled),
    summary,
  );
}

const SERVICE_ARG = { name: 'SERVICE_ID', required: true, description: "the block game service's id (uuid)" };
const PLAYER_ARG = {
  name: 'NAME',
  required: true,
  description: 'the player name (3-16 letters, digits or _)',
};
const MESSAGE_RULE = '1-256 characters, no control characters';
const REASON = option('--reason', `why, shown to the player (${MESSAGE_RULE})`, { value: '<text>' });

/** Each player action: what it does, its arguments after SERVICE_ID, its options. */
const GAME_ACTIONS = {
  kick: [
    'Kick a player',
    'This one kicks: disconnects the online player NAME (the others: svcctl game --help).',
    [PLAYER_ARG],
    [REASON],
  ],
  ban: ['Ban a player', 'Bans the name NAME (online or not) and disconnects it.', [PLAYER_ARG], [REASON]],
  pardon: ['Pardon a player', 'Lifts the ban of NAME.', [PLAYER_ARG], []],
  op: ['Make a player an operator', 'Makes NAME a server operator (ops.json).', [PLAYER_ARG], []],
  deop: ['Take operator status away', 'Makes NAME no longer a server operator.', [PLAYER_ARG], []],
  gamemode: [
    "Set a player's game mode",
    'Sets the game mode of the online player NAME.',
    [PLAYER_ARG, { name: 'MODE', required: true, description: 'survival, creative, adventure or spectator' }],
    [],
  ],
  whisper: [
    'Whisper to a player',
    'Sends MESSAGE to the online player NAME alone; the platform never records it.',
    [PLAYER_ARG, { name: 'MESSAGE', required: true, description: MESSAGE_RULE }],
    [],
  ],
  give: [
    'Give a player items',
    'Gives the online player NAME --count (default 1, at most 64) of ITEM.',
    [
      PLAYER_ARG,
      { name: 'ITEM', required: true, description: 'a namespaced item id, such as minecraft:diamond' },
    ],
    [option('--count', 'how many, 1-64 (default 1)', { value: '<n>' })],
  ],
  broadcast: [
    'Say something to every player',
    'Sends MESSAGE to every player online; the platform never records it.',
    [{ name: 'MESSAGE', required: true, description: MESSAGE_RULE }],
    [],
  ],
} as const satisfies Record<string, readonly [string, string, readonly unknown[], readonly OptionSpec[]]>;
type GameActionKind = keyof typeof GAME_ACTIONS;

function gameCommand(kind: GameActionKind): BesideCommand {
  const [summary, effect, args, options] = GAME_ACTIONS[kind];
  const names = [SERVICE_ARG, ...args].map((a) => `<${a.name}>`).join(' ');
  return {
    summary,
    term: (word: string) => `${word}${options.length > 0 ? ' [options]' : ''} ${names}`,
    runnable: command<typeof RunGames>(
      [
        effect,
        '',
        'Prints the answer ({status}). A status other than ok is exit 10, with what it means on stderr: unsupported_by_server when the server refused it as given, server_offline when the service is not running. Owners and Admins only (anyone else: not found, exit 3).',
      ].join('\n'),
      [SERVICE_ARG, ...args] as unknown as Runnable['arguments'],
      options,
      games,
      (m, _op, input) => m.runGameAction(input, kind),
      // The operation's own command keeps the operation's summary; the others say theirs.
      kind === 'kick' ? undefined : summary,
    ),
  };
}

/** The generated command, unchanged: for an override that only adds commands `beside` it. */
const asGenerated: OperationOverride['runnable'] = async (op) => {
  const { operationRunnable } = await import('./operation-command.js');
  return operationRunnable(op);
};

/** In table mode, the rows a list answer wraps (`resources list`, `backups list`), drawn by `render`. */
const showsTableOf = (
  render: 'resourcesTable' | 'backupsTable' | 'domainConnectTable' | 'schedulesTable' | 'metricsCharts',
): OperationOverride => ({
  async runnable(op) {
    const { operationRunnable } = await import('./operation-command.js');
    let table = false;
    const generated = operationRunnable(op, {
      decorate: async (answer) => (table ? (await services())[render](answer) : answer),
    });
    return {
      ...generated,
      run: async (input) => {
        table = await (await services()).printsTable(input);
        await generated.run(input);
      },
    };
  },
});

/** `resources list` and `subscriptions resources`: in table mode, the resources as rows. */
const showsResourceTable = showsTableOf('resourcesTable');

/**
 * `auth password verify`: --token takes the token or the whole link from the mail (email-link.ts),
 * since copying the token out of a wrapped, quoted-printable .eml by eye goes wrong.
 */
const takesEmailedLink: OperationOverride = {
  async runnable(op) {
    const { operationRunnable } = await import('./operation-command.js');
    const { tokenFromLink } = await import('../email-link.js');
    const generated = operationRunnable(op);
    return {
      ...generated,
      options: generated.options.map((o) =>
        o.long === '--token'
          ? {
              ...o,
              description: 'the token, or the whole link from the mail (…?token=…)',
              parse: (raw: string, previous: unknown) =>
                o.parse ? o.parse(tokenFromLink(raw), previous) : tokenFromLink(raw),
            }
          : o,
      ),
    };
  },
};

/** `firewall replace --file F`: the file's rules (an array, or `{rules}`) become the body. */
const replacesFromFile: OperationOverride = {
  async runnable(op) {
    const { operationRunnable } = await import('./operation-command.js');
    const generated = operationRunnable(op);
    const FILE = option(
      '--file',
      'a JSON or YAML file holding the rules: an array, or {"rules": [...]} (- for stdin)',
      {
        value: '<file>',
      },
    );
    return {
      ...generated,
      options: [...generated.options, FILE],
      run: async (input) => {
        const file = input.options[FILE.key] as string | undefined;
        if (file === undefined) return generated.run(input);
        const { readRulesFile } = await import('../rules-file.js');
        const body = await readRulesFile(file);
        return generated.run({ ...input, options: { ...input.options, data: JSON.stringify(body) } });
      },
    };
  },
};

export const operationOverrides: Readonly<Record<string, OperationOverride>> = {
  authPasswordVerify: takesEmailedLink,

  firewallRulesReplace: replacesFromFile,
  oauthComplete: {
    term: (word) => `${word} --key <key>`,
    runnable: command<typeof RunOAuth>(
      'KEY is what an OAuth sign-in sent the browser back with (?key=..., single use, 2 minutes). The session is saved for the profile, as `svcctl login` does, never printed; `svcctl login --provider ID` does the whole flow.',
      [],
      [option('--key', 'the completion key from ?key=', { value: '<key>', mandatory: true })],
      oauth,
      (m, _op, input) => m.runOAuthComplete(input),
    ),
  },

  // The provider sends a browser there; nothing a terminal would call.
  oauthCallback: {
    hidden: true,
    async runnable(op) {
      const { operationRunnable } = await import('./operation-command.js');
      return operationRunnable(op);
    },
  },

  domainAdd: showsDomainRecord(false),
  domainCheck: showsDomainRecord(true),
  domainConnectVerify: verifiesLink,

  meAvatarUpload: {
    term: (word) => `${word} <FILE>`,
    runnable: command<typeof RunMe>(
      'FILE, a JPEG, PNG, WebP or GIF of at most 10 MB ("-" reads it from stdin), becomes your avatar (stored as a 512×512 WebP under a new asset id). Prints your identity with its new avatar_asset_id.',
      [FILE],
      [],
      me,
      (m, _op, input) => m.runAvatarSet(input),
    ),
  },

  organizationIconUpload: {
    term: (word) => `${word} <ORG_ID> <FILE>`,
    runnable: command<typeof RunOrgs>(
      'FILE, a JPEG, PNG, WebP or GIF of at most 10 MB ("-" reads it from stdin), becomes the icon of the organization ID (stored as a 512×512 WebP under a new asset id); Owners and Admins. Prints the organization with its new icon_asset_id.',
      [{ name: 'ORG_ID', required: true, description: "the organization's id (uuid)" }, FILE],
      [],
      orgs,
      (m, _op, input) => m.runIconSet(input),
    ),
  },

  projectList: {
    term: (word) => `${word} [options]`,
    runnable: command<typeof RunOrgs>(
      'Every project of every organization you belong to; with --org, the projects of that organization only (as `svcctl orgs projects ID`).',
      [],
      [
        option(
          '--org',
          "only this organization's projects (its id; 404, exit 3, when you are not a member)",
          {
            value: '<ORG_ID>',
          },
        ),
      ],
      orgs,
      (m, _op, input) => m.runProjectList(input),
    ),
  },

  projectStatsGet: {
    term: (word) => `${word} [PROJECT_ID]`,
    runnable: command<typeof RunOrgs>(
      "With a project id, that project's stats; without one, the stats of every project `svcctl projects list` shows, in its order (GET /api/v2/projects/stats).",
      [{ name: 'PROJECT_ID', required: false, description: "the project's id (uuid); leave it out for all" }],
      [],
      orgs,
      (m, _op, input) => m.runProjectStats(input),
    ),
  },

  // `projects stats` without an id does this.
  projectStatsList: {
    hidden: true,
    async runnable(op) {
      const { operationRunnable } = await import('./operation-command.js');
      return operationRunnable(op);
    },
  },

  meDiscoveryMark: {
    term: (word) => `${word} [options] [KEY...]`,
    async runnable(op) {
      const { operationRunnable } = await import('./operation-command.js');
      const generated = operationRunnable(op);
      // The keys given as arguments join those of --keys (and of --data, which --keys overrides).
      const keys = generated.options.find((o) => o.long === '--keys')!.key;
      return {
        ...generated,
        description: `${op.summary}. Each KEY (nav:..., tab:..., product:..., ui:...; 1 to 20 in all, with --keys) is recorded with the time it was first marked.\n\n${generated.description.split('\n\n').slice(1).join('\n\n')}`,
        arguments: [
          { name: 'KEY', required: false, description: 'a discovery key, e.g. nav:billing', variadic: true },
        ],
        run: (input) => {
          const given = input.options[keys] as unknown[] | undefined;
          const merged = input.args.length > 0 ? [...(given ?? []), ...input.args] : given;
          return generated.run({ ...input, args: [], options: { ...input.options, [keys]: merged } });
        },
      };
    },
  },

  sudoSetup: {
    runnable: command<typeof RunSudo>(
      'Asks for a new 6-digit PIN twice (not shown as you type). The elevated access token the server answers (elevated for eight hours) is saved for the profile and used from then on; the session refreshes it while the elevation lasts. Setting up the first method needs a signed-in session; adding or replacing one needs an elevated session.',
      [],
      PIN,
      sudo,
      (m, _op, input) => m.runSudoPin(input, 'setup'),
    ),
  },

  sudoElevate: {
    runnable: command<typeof RunSudo>(
      'Asks for your PIN (not shown as you type) and saves the elevated access token the server answers for the profile; commands that need an elevated session use it for eight hours. `svcctl sudo exit` ends it sooner.',
      [],
      PIN,
      sudo,
      (m, _op, input) => m.runSudoPin(input, 'elevate'),
    ),
  },

  sudoTotpEnroll: {
    runnable: command<typeof RunSudo>(
      [
        'Shows the otpauth URL and, on a terminal, a QR code to scan, then asks for the code the app shows. The secret stays pending for 5 minutes.',
        '',
        'For scripts: `svcctl sudo totp enroll --non-interactive` prints {"otpauth_url", "secret", ...} as JSON; then `svcctl sudo totp enroll --code CODE` finishes that pending enrollment.',
      ].join('\n'),
      [],
      [
        option('--code', 'finish the pending enrollment with the code the app shows (no new secret)', {
          value: '<code>',
        }),
        NON_INTERACTIVE,
      ],
      sudo,
      (m, _op, input) => m.runTotpEnroll(input),
    ),
  },

  sudoTotpVerify: {
    runnable: command<typeof RunSudo>(
      'With the code your authenticator app shows now (asked for unless --code is given). The elevated access token is saved for the profile, as with `svcctl sudo elevate`.',
      [],
      [CODE, NON_INTERACTIVE],
      sudo,
      (m, _op, input) => m.runTotpVerify(input),
    ),
  },

  sudoWebauthnRegister: savesElevatedToken,
  sudoWebauthnAuthenticate: savesElevatedToken,

  meApiTokenCreate: {
    term: (word) => `${word} --name <name> --grant <grant>...`,
    runnable: command<typeof RunTokens>(
      [
        'Only a signed-in session mints tokens (not another API token). A token acts with the grants given, each intersected with what your roles allow at the time of each request.',
        '',
        '--grant CAPABILITY[:SCOPE], repeatable, where SCOPE is all (the default), organization=ID (org=ID for short) or project=ID:',
        '  --grant services.read',
        '  --grant projects.read:organization=ORG_ID',
        '  --grant projects.manage:project=PROJECT_ID',
        '`svcctl tokens capabilities` lists the capabilities you may grant and the scopes each takes. Admin-only ones need --admin-authorized and an elevated session (svcctl sudo elevate).',
        '',
        SECRET_OUTPUT(
          'the secret (svc_pat_...)',
          ', and with --save-as the secret is saved instead of printed',
        ),
        '',
        'Use it as SVCCTL_TOKEN=... or --token ..., or save it with --save-as PROFILE and use --profile PROFILE.',
      ].join('\n'),
      [],
      [
        option('--name', "the token's name, 1-64 characters", { value: '<name>', mandatory: true }),
        option('--grant', `${GRANT_SYNTAX} (repeatable; at least one)`, {
          value: '<grant>',
          parse: accumulateGrant,
          mandatory: true,
        }),
        option(
          '--expires-at',
          'when it stops working, an RFC 3339 time in the future such as 2030-01-31T00:00:00Z (default: never)',
          {
            value: '<date-time>',
          },
        ),
        option(
          '--admin-authorized',
          'required exactly when a grant names an admin-only capability (staff, elevated session)',
        ),
        option(
          '--save-as',
          "save the token in credentials.yaml as profile PROFILE's (one without credentials; its base_url is set to this server unless it has one), instead of printing it",
          { value: '<profile>' },
        ),
      ],
      tokens,
      (m, _op, input) => m.runTokenCreate(input),
    ),
  },

  meDelegationGrant: {
    term: (word) => `${word} --application-id <id> --capability <name>...`,
    runnable: command<typeof RunTokens>(
      'Lets the application act for you (X-Acting-As-User) with these capabilities, intersected with what your roles allow; granting again replaces them, and revives a revoked delegation. Prints the delegation: its id is what `svcctl delegations revoke` takes.',
      [],
      [
        option('--application-id', "the application's id (uuid)", { value: '<id>', mandatory: true }),
        CAPABILITY('a capability it may use for you', true),
      ],
      tokens,
      (m, _op, input) => m.runDelegationGrant(input),
    ),
  },

  adminApplicationCreate: {
    term: (word) => `${word} --name <name> [--capability <name>...]`,
    runnable: command<typeof RunTokens>(
      [
        'Needs an elevated session (svcctl sudo elevate) holding manage_applications, or an admin-authorized API token with admin.applications.manage. The application acts as itself with its capabilities (users.read.public, users.lookup.oauth for the application reads), and for users who delegate to it.',
        '',
        SECRET_OUTPUT('the application token (svc_app_...)'),
      ].join('\n'),
      [],
      [
        option('--name', "the application's name, 1-64 characters", { value: '<name>', mandatory: true }),
        CAPABILITY('a capability the application holds as itself', false),
      ],
      tokens,
      (m, _op, input) => m.runApplicationCreate(input),
    ),
  },

  adminApplicationTokenRotate: {
    term: (word) => `${word} <APPLICATION_ID>`,
    runnable: command<typeof RunTokens>(
      [
        'The previous token stops working at once. Needs what `svcctl admin applications create` needs.',
        '',
        SECRET_OUTPUT('the new token (svc_app_...)'),
      ].join('\n'),
      [{ name: 'APPLICATION_ID', required: true, description: "the application's id (uuid)" }],
      [],
      tokens,
      (m, _op, input) => m.runApplicationTokenRotate(input),
    ),
  },

  adminResellerIconUpload: {
    term: (word) => `${word} <RESELLER_ID> <FILE>`,
    runnable: command<typeof RunAdminContent>(
      'FILE, a JPEG, PNG, WebP or GIF of at most 10 MB ("-" reads it from stdin; SVG is refused), becomes the icon of the reseller ID (stored as a 512×512 WebP under a new asset id). Needs an elevated session holding manage_public_content, or an admin-authorized API token with admin.public_content.manage. Prints the reseller with its new icon_asset_id.',
      [{ name: 'RESELLER_ID', required: true, description: "the reseller's id (uuid)" }, FILE],
      [],
      adminContent,
      (m, _op, input) => m.runResellerImageSet(input, 'adminResellerIconUpload'),
    ),
  },

  adminResellerOgImageUpload: {
    term: (word) => `${word} <RESELLER_ID> <FILE>`,
    runnable: command<typeof RunAdminContent>(
      'FILE, a JPEG, PNG, WebP or GIF of at most 10 MB ("-" reads it from stdin), becomes the link-preview image of the reseller ID (stored as a 1200×630 WebP, cropped to cover); link previews use it while the reseller\'s og_image_mode is custom (svcctl admin resellers update ID --og-image-mode custom). Prints the reseller.',
      [{ name: 'RESELLER_ID', required: true, description: "the reseller's id (uuid)" }, FILE],
      [],
      adminContent,
      (m, _op, input) => m.runResellerImageSet(input, 'adminResellerOgImageUpload'),
    ),
  },

  adminCaptchaConfigSet: {
    async runnable(op) {
      const { operationRunnable } = await import('./operation-command.js');
      const generated = operationRunnable(op);
      const secret = generated.options.find((o) => o.long === '--secret')!.key;
      return {
        ...generated,
        options: [
          ...generated.options,
          option(
            '--secret-stdin',
            "read the provider's secret from the next line of stdin (unseen on a terminal) instead of --secret, which others on this machine can see in the process list",
          ),
        ],
        run: async (input) => (await adminContent()).runCaptchaSet(generated, secret, input),
      };
    },
  },

  vpsReinstall: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID> --image <image>`,
    runnable: command<typeof RunServices>(
      [
        "Rebuilds the VPS's virtual machine RESOURCE_ID (see svcctl resources list ID) from IMAGE, one of the product's operating systems (svcctl catalog products os-images PRODUCT_ID). Everything on its disk is erased.",
        '',
        'On a terminal it asks first ("Reinstall RESOURCE_ID with IMAGE? All data on it is erased [y/N]"); --yes confirms without asking, and without a terminal --yes is required (else exit 2, and nothing is started).',
        '',
        `Prints the accepted answer (operation_id, os_image, resource_id, service_instance_id). ${WAIT_OUTPUT}`,
        '',
        'Each run sends an Idempotency-Key, so a run repeated with the same --idempotency-key never starts a second reinstall; when no answer came, the key to repeat it with is shown.',
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        {
          name: 'RESOURCE_ID',
          required: true,
          description: "the virtual machine's resource id (uuid), of this service instance",
        },
      ],
      [
        option(
          '--image',
          'the operating-system image to install, e.g. debian-12 (the installed one is allowed)',
          {
            value: '<image>',
            mandatory: true,
          },
        ),
        option('--os-image', 'the same as --image', { value: '<image>', key: 'image' }),
        option('--yes', 'confirm that all data on the machine is erased, without being asked'),
        WAIT,
        IDEMPOTENCY_KEY,
      ],
      services,
      (m, _op, input) => m.runReinstall(input),
    ),
  },

  vpsAccessSshKeysSet: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID> --file <file>`,
    runnable: command<typeof RunVps>(
      [
        "Replaces root's authorized keys on the VPS's virtual machine RESOURCE_ID with the keys of the files: each an OpenSSH public key file (~/.ssh/id_ed25519.pub) or an authorized_keys file (one key a line; blank and # lines skipped), - for stdin. --none removes every key. The machine has them within 5 seconds, and keeps them across reinstalls.",
        '',
        'Prints the access answer (username, host, port, password_set, ssh_keys with their SHA256 fingerprints).',
      ].join('\n'),
      VPS_ARGS,
      [
        option('--file', 'an OpenSSH public key file, or - for stdin (repeatable)', { value: '<file>', parse: repeated }),
        option('--none', 'remove every key'),
      ],
      vps,
      (m, _op, input) => m.runVpsSshKeysSet(input),
    ),
  },

  vpsAccessRootPasswordReset: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID>`,
    runnable: command<typeof RunVps>(
      [
        "Sets a new random root password on the VPS's virtual machine RESOURCE_ID, turning password sign-in on within 5 seconds; the previous one stops working. A reinstall clears it.",
        '',
        SECRET_OUTPUT('the password'),
      ].join('\n'),
      VPS_ARGS,
      [IDEMPOTENCY_KEY],
      vps,
      (m, _op, input) => m.runVpsRootPassword(input),
    ),
  },

  vpsAccessGet: {
    runnable: asGenerated,
    beside: {
      ssh: {
        summary: 'Sign in to a VPS with the system ssh',
        term: (word) => `${word} <SERVICE_ID> <RESOURCE_ID> [-- <ssh args>...]`,
        runnable: command<typeof RunVps>(
          [
            "Runs the system's ssh (OpenSSH; SVCCTL_SSH names another) as root at the machine's SSH address and port (`svcctl vps access`), with the arguments after -- following the destination: options such as -i KEY, then a command to run. Exits with ssh's code.",
            '',
            'Sign-in is by a key set with `svcctl vps ssh-keys set`, or by the password of `svcctl vps root-password`.',
          ].join('\n'),
          [
            ...VPS_ARGS,
            { name: 'SSH_ARGS', required: false, variadic: true, description: "ssh's own options and the command to run, after --" },
          ],
          [],
          vps,
          (m, _op, input) => m.runVpsSsh(input),
          'Sign in to a VPS with the system ssh',
        ),
      },
    },
  },

  sftpUpdate: {
    term: (word) => `${word} <SERVICE_ID>`,
    runnable: sftpCommand(true),
    beside: {
      disable: {
        summary: "Disable a service's SFTP account",
        term: (word) => `${word} <SERVICE_ID>`,
        runnable: sftpCommand(false, "Disable a service's SFTP account"),
      },
    },
  },

  gameActionRun: {
    term: gameCommand('kick').term,
    runnable: gameCommand('kick').runnable,
    beside: Object.fromEntries(
      (Object.keys(GAME_ACTIONS) as GameActionKind[])
        .filter((k) => k !== 'kick')
        .map((k) => [k, gameCommand(k)]),
    ),
  },

  serviceInstancePower: {
    term: (word) => `${word} [options] <SERVICE_ID>`,
    runnable: powerCommand('start', 'Start a service'),
    beside: {
      stop: {
        summary: 'Stop a service',
        term: (word) => `${word} [options] <SERVICE_ID>`,
        runnable: powerCommand('stop', 'Stop a service'),
      },
      restart: {
        summary: 'Restart a service',
        term: (word) => `${word} [options] <SERVICE_ID>`,
        runnable: powerCommand('restart', 'Restart a service'),
      },
    },
  },

  importStart: {
    term: (word) => `${word} [options] <SERVICE_ID>`,
    runnable: command<typeof RunImports>(
      [
        "Copies the directory --remote-path (default ., the account's root) of an SFTP server into the volume of the stopped service SERVICE_ID, at its root; files already there with the same size and time are skipped. The password is asked for unseen (or read with --password-stdin) and kept by the platform only while the import runs.",
        '',
        `Prints the import (its status is the progress; svcctl imports show SERVICE_ID IMPORT_ID). ${WAIT_OUTPUT}`,
        '',
        'A service that is not stopped is exit 6 (service-running): svcctl power stop SERVICE_ID first. A private or loopback host is refused (import-host-refused).',
      ].join('\n'),
      [{ name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" }],
      [
        option('--host', 'the SFTP server: a host name or a public IP address', {
          value: '<host>',
          mandatory: true,
        }),
        option('--port', 'its port (default 22)', { value: '<port>' }),
        option('--username', 'the account on it', { value: '<name>', mandatory: true }),
        ...secretOptions('--password', 'password'),
        option('--remote-path', "the directory to copy (default ., the account's root)", { value: '<path>' }),
        option('--delete-extraneous', 'also delete from the volume what the remote directory does not hold'),
        NON_INTERACTIVE,
        WAIT,
        IDEMPOTENCY_KEY,
      ],
      imports,
      (m, _op, input) => m.runImportStart(input),
    ),
  },

  importCancel: {
    term: (word) => `${word} [options] <SERVICE_ID> <IMPORT_ID>`,
    runnable: command<typeof RunImports>(
      [
        'Asks the import to stop; files already copied stay. Prints the import with cancel_requested. An import that has ended is exit 6 (import-finished).',
        '',
        "With --wait it then follows the import's operation until it has ended (exit 0 once cancelled, or if it finished first).",
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        { name: 'IMPORT_ID', required: true, description: "the import's id (uuid)" },
      ],
      [WAIT],
      imports,
      (m, _op, input) => m.runImportCancel(input),
    ),
  },

  backupCreate: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID>`,
    runnable: command<typeof RunServices>(
      [
        'Backs up the volume RESOURCE_ID of the service SERVICE_ID (see svcctl resources list SERVICE_ID) while the service keeps running. The backup is listed at once as creating, then ready (svcctl backups list SERVICE_ID RESOURCE_ID).',
        '',
        `Prints the accepted answer (backup, operation_id). ${WAIT_OUTPUT}`,
        '',
        'Each run sends an Idempotency-Key (a new one unless --idempotency-key gives it). At the ceiling of 5 backups, exit 6 (quota-exceeded): delete one first.',
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        { name: 'RESOURCE_ID', required: true, description: "the volume's resource id (uuid)" },
      ],
      [
        option('--name', "the backup's name (default backup-YYYYMMDD-HHMMSS, UTC)", { value: '<name>' }),
        WAIT,
        IDEMPOTENCY_KEY,
      ],
      services,
      (m, _op, input) => m.runBackupCreate(input),
    ),
  },

  backupRestore: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID> <BACKUP_ID>`,
    runnable: command<typeof RunServices>(
      [
        "Puts the volume RESOURCE_ID back as it was when BACKUP_ID was made, replacing everything on it: the service's machines and workloads are stopped, the data reverted, and what ran is started again. Irreversible.",
        '',
        'On a terminal it asks first; --yes confirms without asking, and without a terminal --yes is required (else exit 2, and nothing is started).',
        '',
        `Prints the accepted answer (backup, operation_id). ${WAIT_OUTPUT} The phase shown is the restore's: stopping, reverting (with the bytes done), starting.`,
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        { name: 'RESOURCE_ID', required: true, description: "the volume's resource id (uuid)" },
        { name: 'BACKUP_ID', required: true, description: "the backup's id (uuid)" },
      ],
      [
        option('--yes', 'confirm that everything on the volume is replaced, without being asked'),
        WAIT,
        IDEMPOTENCY_KEY,
      ],
      services,
      (m, _op, input) => m.runBackupRestore(input),
    ),
  },

  consoleTicketCreate: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID>`,
    runnable: command<typeof RunConsole>(
      [
        "Attaches this terminal to the command console of the workload RESOURCE_ID (see svcctl resources list SERVICE_ID), like telnet: what you type goes to the program's stdin, its output comes back, shared with everyone else attached. The last 64 KiB of output come first. On a terminal it runs in raw mode and Ctrl-] leaves; without one, stdin is sent as it comes and the command leaves a second after stdin ends (echo list | svcctl console SERVICE_ID RESOURCE_ID).",
        '',
        '--ticket prints the single-use ticket ({expires_at, url}) instead of attaching: open url as a WebSocket within 60 seconds.',
        '',
        'Exits 0 when you leave or the console ends, 4 when your access to it ended meanwhile.',
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        { name: 'RESOURCE_ID', required: true, description: "the workload's resource id (uuid)" },
      ],
      [option('--ticket', 'print the ticket instead of attaching')],
      consoles,
      (m, _op, input) => m.runConsole(input),
    ),
  },

  shellTicketCreate: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID>`,
    runnable: command<typeof RunConsole>(
      [
        'Opens a shell in the workload or machine RESOURCE_ID (see svcctl resources list SERVICE_ID), confined to it: its volume is the root directory, nothing of the host is visible. On a terminal it runs in raw mode at the terminal\'s size and follows its resizes (SIGWINCH); leave with exit (or Ctrl-D). Without a terminal, stdin is sent as it comes (echo "ls /" | svcctl shell SERVICE_ID RESOURCE_ID).',
        '',
        '--ticket prints the single-use ticket ({container, expires_at, shells, url}) instead: open url with &columns=C&rows=R appended, subprotocol svc-pty-v1, within 10 seconds.',
        '',
        "Exits with the shell's exit code; 4 when your access to it ended meanwhile.",
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        {
          name: 'RESOURCE_ID',
          required: true,
          description: "the workload's or machine's resource id (uuid)",
        },
      ],
      [
        option('--container', "the container (default the workload's)", { value: '<name>' }),
        option('--ticket', 'print the ticket instead of opening the shell'),
      ],
      consoles,
      (m, _op, input) => m.runShell(input),
    ),
  },

  screenTicketCreate: {
    term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID>`,
    runnable: command<typeof RunScreen>(
      [
        "Takes the exclusive hold on the screen of the machine RESOURCE_ID (see svcctl resources list SERVICE_ID) and prints the screen's WebSocket URL on stdout, for noVNC (RFB 3.8, subprotocol binary; stderr shows the vnc.html parameters). Open it within 60 seconds. While this runs it keeps the hold (refreshing it every 20 seconds): only your screen types and points, everyone else's watches. Ctrl-C (or SIGTERM) releases the hold; the open screen stays connected.",
        '',
        "Held by someone else: exit 6 naming them, unless --force takes it over (their screen stays open, read-only). Losing it to someone else's --force ends this with exit 6 naming them.",
        '',
        '--ticket prints the ticket ({expires_at, hold_expires_at, protocols, session_id, url}) instead; refresh the hold yourself with svcctl screen-hold refresh.',
      ].join('\n'),
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        { name: 'RESOURCE_ID', required: true, description: "the machine's resource id (uuid)" },
      ],
      [
        option('--force', 'take the screen over from its current holder'),
        option('--ticket', 'print the ticket instead of holding the screen'),
      ],
      screens,
      (m, _op, input) => m.runScreen(input),
    ),
  },

  fileWrite: fileWriteOverride,

  fileRead: {
    term: (word) => `${word} <SERVICE_ID> <RESOURCE_ID> <PATH>`,
    runnable: command<typeof RunFiles>(
      "Prints the text file PATH of the volume (or of the workload's volume) RESOURCE_ID on stdout, as it is (no JSON). Files over 1 MiB or not UTF-8 are refused (exit 6): download those with svcctl files get.",
      [
        { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
        { name: 'RESOURCE_ID', required: true, description: "the volume's or workload's resource id (uuid)" },
        {
          name: 'PATH',
          required: true,
          description: 'the file, absolute within the volume (/config/server.properties)',
        },
      ],
      [],
      fileTransfers,
      (m, _op, input) => m.runFilesCat(input),
    ),
  },

  fileDownloadTicketCreate: {
    runnable: asGenerated,
    beside: {
      get: {
        summary: 'Download a file of any size through the gateway',
        term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID> <PATH> [LOCAL]`,
        runnable: command<typeof RunFiles>(
          [
            "Downloads the file PATH of the volume RESOURCE_ID through the edge gateway (a single-use download ticket; the bytes do not pass through the API) into LOCAL: a file name, a directory (the file keeps its name), - for stdout, or by default the file's name in the current directory. The file is written beside its name and renamed when complete, so an interrupted download leaves nothing.",
            '',
            'On a terminal, a progress bar on stderr for files over 1 MiB (none with --quiet).',
          ].join('\n'),
          [
            { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
            {
              name: 'RESOURCE_ID',
              required: true,
              description: "the volume's or workload's resource id (uuid)",
            },
            { name: 'PATH', required: true, description: 'the file, absolute within the volume' },
            {
              name: 'LOCAL',
              required: false,
              description: 'where to write it (default: its name here; - for stdout)',
            },
          ],
          [],
          fileTransfers,
          (m, _op, input) => m.runFilesGet(input),
          'Download a file of any size through the gateway',
        ),
      },
    },
  },

  fileSessionTicketCreate: {
    runnable: asGenerated,
    beside: {
      put: {
        summary: 'Upload a file of any size through the gateway',
        term: (word) => `${word} [options] <SERVICE_ID> <RESOURCE_ID> <LOCAL> <PATH>`,
        runnable: command<typeof RunFiles>(
          [
            "Uploads LOCAL (a file, or - for stdin) to PATH on the volume RESOURCE_ID through the edge gateway (a file session; the bytes do not pass through the API). PATH is replaced atomically once the upload is complete; its directory must exist (svcctl files mkdir). An upload past the volume's size is refused (exit 5) and nothing is kept.",
            '',
            'On a terminal, a progress bar on stderr for files over 1 MiB (none with --quiet).',
          ].join('\n'),
          [
            { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
            {
              name: 'RESOURCE_ID',
              required: true,
              description: "the volume's or workload's resource id (uuid)",
            },
            { name: 'LOCAL', required: true, description: 'the file to upload, or - for stdin' },
            { name: 'PATH', required: true, description: 'where to put it, absolute within the volume' },
          ],
          [],
          fileTransfers,
          (m, _op, input) => m.runFilesPut(input),
          'Upload a file of any size through the gateway',
        ),
      },
    },
  },

  serviceOperationGet: {
    runnable: asGenerated,
    beside: {
      wait: {
        summary: WAIT_SUMMARY,
        term: (word) => `${word} <SERVICE_ID> <OPERATION_ID>`,
        runnable: command<typeof RunServices>(
          [
            'Polls the operation (as `svcctl operations show` does, from every 250 ms to every 2 s) until it succeeded, failed or was cancelled, showing its progress on stderr: a bar redrawn in place on a terminal, a plain line per change ("phase stop 10%") otherwise, none with --quiet. Then prints the operation as `operations show` does.',
            '',
            'Exits 0 when it succeeded, 7 when it failed or was cancelled (its error on stderr). Ctrl-C stops the waiting, not the operation.',
          ].join('\n'),
          [
            { name: 'SERVICE_ID', required: true, description: "the service instance's id (uuid)" },
            { name: 'OPERATION_ID', required: true, description: "the operation's id (uuid)" },
          ],
          [],
          services,
          (m, _op, input) => m.runOperationWait(input),
          WAIT_SUMMARY,
        ),
      },
    },
  },

  adminSubscriptionCreate: {
    async runnable(op) {
      const { operationRunnable } = await import('./operation-command.js');
      let answered: Answered | null = null;
      const generated = operationRunnable(op, {
        decorate: (answer, client) => {
          answered = { answer, client };
          return answer;
        },
      });
      const key = generated.options.find((o) => o.long === '--idempotency-key')!.key;
      const [summary, ...rest] = generated.description.split('\n\n');
      return {
        ...generated,
        description: [
          `${summary}. Prints the accepted answer (subscription_id, service_instance_id, operation_id); an Idempotency-Key is always sent (a new random one unless --idempotency-key gives it). ${WAIT_OUTPUT.replace('ID OPERATION_ID', 'SERVICE_INSTANCE_ID OPERATION_ID')}`,
          ...rest,
        ].join('\n\n'),
        options: [...generated.options, { ...WAIT, group: 'Request options:' }],
        run: async (input) => (await services()).runSubscriptionCreate(generated, key, () => answered, input),
      };
    },
  },

  // Adding someone already a member answers their membership unchanged (200): when it holds another
  // role than the one asked for, nothing was done, and saying nothing would leave a script believing
  // the role was given.
  memberAdd: {
    async runnable(op) {
      const { operationRunnable } = await import('./operation-command.js');
      let asked = 'member';
      let organizationId = '';
      const generated = operationRunnable(op, {
        sending: (request) => {
          const body = request.body as { role?: unknown } | undefined;
          if (typeof body?.role === 'string') asked = body.role;
        },
        decorate: async (membership) => (await orgs()).requireRole(membership, asked, organizationId),
      });
      const [summary, ...rest] = generated.description.split('\n\n');
      return {
        ...generated,
        description: [
          `${summary}. Adding someone already a member with the role asked for (member unless --role says otherwise) changes nothing and prints the membership; already a member with another role is refused with exit 6 and nothing changes (\`svcctl members update\` changes a role).`,
          ...rest,
        ].join('\n\n'),
        run: async (input) => {
          organizationId = input.args[0] ?? '';
          await generated.run(input);
        },
      };
    },
  },

  serviceInstanceResourceList: showsResourceTable,
  // `backups list`: in table mode, the backups as rows and the ceiling used.
  backupList: showsTableOf('backupsTable'),
  scheduleList: showsTableOf('schedulesTable'),
  serviceMetricsGet: showsTableOf('metricsCharts'),
  // `domains connect list`: in table mode, the links as rows and the limit used.
  domainConnectList: showsTableOf('domainConnectTable'),
  subscriptionResourceList: showsResourceTable,

  sudoExit: {
    runnable: command<typeof RunSudo>(
      'The un-elevated access token the server answers replaces the elevated one in the profile.',
      [],
      [],
      sudo,
      (m, _op, input) => m.runSudoExit(input),
    ),
  },
};
