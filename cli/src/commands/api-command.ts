// `svcctl api METHOD PATH`: any route, for what the generated commands do not (yet) cover.
import { Option, type Command } from '../commander.js';
import { addGlobalOptions } from '../global-options.js';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function defineApiCommand(cmd: Command): void {
  cmd
    .description(
      "Send a request to any route of the API. PATH is relative to /api/v2 and may carry a query string; the answer is printed like any command's (JSON values in the output format, bytes to --output).",
    )
    .argument('<method>', 'GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS')
    .argument('<path>', 'the route below /api/v2, e.g. /public/resellers/by-host/example.com')
    .addOption(
      new Option(
        '--data <json>',
        'the request body: inline JSON, @file.json (or .yaml) or @- for stdin',
      ).helpGroup('Request options:'),
    )
    .addOption(
      new Option('--query <key=value>', 'a query parameter (repeatable)')
        .argParser(collect)
        .helpGroup('Request options:'),
    )
    .addOption(
      new Option('--header <name=value>', 'an extra request header (repeatable)')
        .argParser(collect)
        .helpGroup('Request options:'),
    )
    .addOption(
      new Option('--output <file>', 'write a binary answer to a file ("-" for stdout)').helpGroup(
        'Request options:',
      ),
    );
  addGlobalOptions(cmd, new Set(['-h', '--help', '--data', '--query', '--header', '--output']));
  cmd.action(async (method: string, path: string) => {
    const { runApi } = await import('../run-api.js');
    await runApi(cmd, method, path);
  });
}
