// `svcctl whoami`: whose credential this is. GET /me answers every authenticated caller, whatever a
// token's capabilities (DECISIONS.md §7), so a script can always learn whose token it holds.
import type { CommandSpec } from '../argv/spec.js';

export const whoamiCommand: CommandSpec = {
  name: 'whoami',
  summary: 'who the saved session or the token acts for',
  term: 'whoami',
  listGroup: 'Other commands:',
  subcommands: () => [],
  runnable: () => ({
    description:
      "Prints the account the profile's session, SVCCTL_TOKEN or --token acts for (GET /me): any token may ask, whatever it was granted; a restricted token sees system_permissions empty.",
    arguments: [],
    options: [],
    async run(input) {
      const { runWhoami } = await import('../run-whoami.js');
      await runWhoami(input);
    },
  }),
};
