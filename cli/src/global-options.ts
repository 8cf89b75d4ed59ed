// Options every command accepts, before or after its words. A command whose own option has the same
// flag (a body field called `token`) keeps it after its words; the global one still works before.
import type { OptionSpec } from './argv/spec.js';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The global options' values, as parsed (keys are the OptionSpec keys below). */
export interface GlobalFlags {
  baseUrl?: string;
  profile?: string;
  outputFormat?: OutputFormat;
  token?: string;
  quiet?: boolean;
}

const GROUP = 'Global options:';

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  {
    long: '--base-url',
    value: '<url>',
    key: 'baseUrl',
    group: GROUP,
    description: 'API base URL, without /api/v2 (env: SVCCTL_BASE_URL)',
  },
  {
    long: '--profile',
    value: '<name>',
    key: 'profile',
    group: GROUP,
    description: 'configuration profile (env: SVCCTL_PROFILE; default "default")',
  },
  {
    long: '--output-format',
    short: '-o',
    value: '<format>',
    key: 'outputFormat',
    group: GROUP,
    choices: OUTPUT_FORMATS,
    description: 'table, json or yaml (env: SVCCTL_OUTPUT; default: table on a terminal, else json)',
  },
  {
    long: '--token',
    value: '<token>',
    key: 'token',
    group: GROUP,
    description: "API token, instead of the profile's (env: SVCCTL_TOKEN)",
  },
  { long: '--quiet', short: '-q', key: 'quiet', group: GROUP, description: 'print nothing on success' },
];
