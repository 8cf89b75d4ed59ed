// `svcctl api METHOD PATH`: any route, for what the generated commands do not (yet) cover.
import type { CommandSpec, OptionSpec } from '../argv/spec.js';

const GROUP = 'Request options:';

const collect = (raw: string, previous: unknown): string[] => [
  ...(Array.isArray(previous) ? (previous as string[]) : []),
  raw,
];

const OPTIONS: readonly OptionSpec[] = [
  {
    long: '--data',
    value: '<json>',
    key: 'data',
    group: GROUP,
    description: 'the request body: inline JSON, @file.json (or .yaml) or @- for stdin',
  },
  {
    long: '--query',
    value: '<key=value>',
    key: 'query',
    group: GROUP,
    description: 'a query parameter (repeatable)',
    parse: collect,
  },
  {
    long: '--header',
    value: '<name=value>',
    key: 'header',
    group: GROUP,
    description: 'an extra request header (repeatable)',
    parse: collect,
  },
  {
    long: '--paginate',
    key: 'paginate',
    group: GROUP,
    description: 'GET a paged list ({data, meta}) page after page, printed as one page of every item',
  },
  {
    long: '--output',
    value: '<file>',
    key: 'output',
    group: GROUP,
    description: 'write a binary answer to a file ("-" for stdout)',
  },
];

export const apiCommand: CommandSpec = {
  name: 'api',
  summary: 'call any route: svcctl api GET /public/incidents',
  term: 'api [options] <METHOD> <PATH>',
  listGroup: 'Other commands:',
  subcommands: () => [],
  runnable: () => ({
    description:
      "Send a request to any route of the API. PATH is relative to /api/v2 and may carry a query string; the answer is printed like any command's (JSON values in the output format, bytes to --output).",
    arguments: [
      {
        name: 'METHOD',
        required: true,
        description: 'GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS',
        values: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
      },
      {
        name: 'PATH',
        required: true,
        description: 'the route below /api/v2, e.g. /public/resellers/by-host/example.com',
      },
    ],
    options: OPTIONS,
    async run(input) {
      const { runApi } = await import('../run-api.js');
      await runApi(input);
    },
  }),
};
