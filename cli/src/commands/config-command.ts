// `svcctl config ...`: reads and writes config.yaml. Definitions only; run-config.ts does the work.
import type { ArgumentSpec, CommandSpec, ParsedInput } from '../argv/spec.js';
import type * as RunConfig from '../run-config.js';

/** The settable keys (config-file.ts CONFIG_KEYS, which a test holds this to), for completion. */
export const SETTABLE_KEYS = ['base-url', 'output'] as const;

const KEY: ArgumentSpec = {
  name: 'KEY',
  required: true,
  description: "base-url (the API's URL) or output (table, json or yaml)",
  values: SETTABLE_KEYS,
};

function leaf(
  name: string,
  summary: string,
  args: readonly ArgumentSpec[],
  run: (module: typeof RunConfig, input: ParsedInput) => Promise<void>,
): CommandSpec {
  const term = [name, ...args.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`))].join(' ');
  return {
    name,
    summary,
    term,
    subcommands: () => [],
    runnable: () => ({
      description: `${summary[0]!.toUpperCase()}${summary.slice(1)}.`,
      arguments: args,
      options: [],
      run: async (input) => run(await import('../run-config.js'), input),
    }),
  };
}

const SUBCOMMANDS: readonly CommandSpec[] = [
  leaf(
    'show',
    'show the effective settings of the profile: base URL, output format, token source, file paths',
    [],
    (m, i) => m.configGet(i),
  ),
  leaf(
    'set',
    'set a setting of the profile',
    [KEY, { name: 'VALUE', required: true, description: 'the new value' }],
    (m, i) => m.configSet(i),
  ),
  leaf('unset', 'remove a setting from the profile', [KEY], (m, i) => m.configUnset(i)),
  leaf(
    'get',
    'show the effective settings of the profile, or one of them',
    [
      {
        ...KEY,
        required: false,
        description: `${KEY.description}, profile, token, config-dir, ...`,
        values: [...SETTABLE_KEYS, 'profile', 'token', 'config-dir', 'config-file', 'credentials-file'],
      },
    ],
    (m, i) => m.configGet(i),
  ),
  leaf('profiles', 'list the profiles of config.yaml and credentials.yaml', [], (m, i) =>
    m.configProfiles(i),
  ),
];

export const configCommand: CommandSpec = {
  name: 'config',
  summary: 'show, get, set, unset: settings (base URL, output format) per profile; profiles',
  term: 'config <command>',
  listGroup: 'Other commands:',
  description:
    'Show and change settings per profile. Settings live in config.yaml in the config directory ($SVCCTL_CONFIG_DIR, else $XDG_CONFIG_HOME/svcctl, else ~/.config/svcctl); --profile picks the profile they apply to.',
  subcommands: () => SUBCOMMANDS,
};
