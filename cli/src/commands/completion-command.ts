// `svcctl completion bash|zsh|fish`: prints a shell completion script. Definitions only; the script is
// built by run-completion.ts from the command tree itself, so every command is in it.
import type { CommandSpec } from '../argv/spec.js';

const SHELLS = ['bash', 'zsh', 'fish'];

export const completionCommand: CommandSpec = {
  name: 'completion',
  summary: 'print a completion script for bash, zsh or fish',
  term: 'completion <SHELL>',
  listGroup: 'Other commands:',
  subcommands: () => [],
  runnable: () => ({
    description: [
      "Prints a script that completes svcctl's commands, options and their values (output formats, enum fields, config keys) in SHELL, built from the command tree of this svcctl. Tab then runs one awk over it, never svcctl itself.",
      '',
      'bash:  source <(svcctl completion bash)   or save it as ~/.local/share/bash-completion/completions/svcctl',
      'zsh:   source <(svcctl completion zsh)    (after compinit) or save it as _svcctl in a directory of $fpath',
      'fish:  svcctl completion fish | source     or save it as ~/.config/fish/completions/svcctl.fish',
      '',
      "Regenerate it after upgrading svcctl (a source line in the shell's start-up file does so by itself).",
    ].join('\n'),
    arguments: [{ name: 'SHELL', required: true, description: 'bash, zsh or fish', values: SHELLS }],
    options: [],
    async run(input) {
      const { runCompletion } = await import('../run-completion.js');
      await runCompletion(input);
    },
  }),
};
