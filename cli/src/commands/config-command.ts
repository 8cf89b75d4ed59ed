// `svcctl config ...`: reads and writes config.yaml. Definitions only; run-config.ts does the work.
import type { Command } from 'commander';
import { addGlobalOptions } from '../global-options.js';

const KEYS_HELP = "base-url (the API's URL) or output (table, json or yaml)";

export function defineConfigCommand(config: Command): void {
  config.description(
    'Show and change settings per profile. Settings live in config.yaml in the config directory ($SVCCTL_CONFIG_DIR, else $XDG_CONFIG_HOME/svcctl, else ~/.config/svcctl); --profile picks the profile they apply to.',
  );
  const leaf = (name: string, summary: string) => {
    const cmd = config.command(name).summary(summary).description(`${summary}.`);
    addGlobalOptions(cmd, new Set(['-h', '--help']));
    return cmd;
  };
  leaf('set', 'set a setting of the profile')
    .argument('<key>', KEYS_HELP)
    .argument('<value>', 'the new value')
    .action(async (key: string, value: string, _opts: unknown, cmd: Command) => {
      const { configSet } = await import('../run-config.js');
      await configSet(cmd, key, value);
    });
  leaf('unset', 'remove a setting from the profile')
    .argument('<key>', KEYS_HELP)
    .action(async (key: string, _opts: unknown, cmd: Command) => {
      const { configUnset } = await import('../run-config.js');
      await configUnset(cmd, key);
    });
  leaf('get', 'show the effective settings of the profile, or one of them')
    .argument('[key]', `${KEYS_HELP}, profile, config-dir`)
    .action(async (key: string | undefined, _opts: unknown, cmd: Command) => {
      const { configGet } = await import('../run-config.js');
      await configGet(cmd, key);
    });
  leaf('profiles', 'list the profiles of config.yaml and credentials.yaml').action(
    async (_opts: unknown, cmd: Command) => {
      const { configProfiles } = await import('../run-config.js');
      await configProfiles(cmd);
    },
  );
}
