// Options every command accepts. They are declared on the root (before the command words) and again
// on each leaf (after them), because the root uses positional options: a body field called `token`
// must reach the leaf, not be taken as the API token. Where a leaf has a field of the same name, the
// field wins there and the global option is still accepted before the command words.
import { Option, type Command } from './commander.js';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface GlobalFlags {
  baseUrl?: string;
  profile?: string;
  outputFormat?: OutputFormat;
  token?: string;
  quiet?: boolean;
}

interface GlobalOptionSpec {
  flags: string;
  long: string;
  short?: string;
  description: string;
  choices?: readonly string[];
}

const SPECS: readonly GlobalOptionSpec[] = [
  {
    flags: '--base-url <url>',
    long: '--base-url',
    description: 'API base URL, without /api/v2 (env: SVCCTL_BASE_URL)',
  },
  {
    flags: '--profile <name>',
    long: '--profile',
    description: 'configuration profile (env: SVCCTL_PROFILE; default "default")',
  },
  {
    flags: '-o, --output-format <format>',
    long: '--output-format',
    short: '-o',
    description: 'output format (default: table on a terminal, else json)',
    choices: OUTPUT_FORMATS,
  },
  {
    flags: '--token <token>',
    long: '--token',
    description: "API token, instead of the profile's (env: SVCCTL_TOKEN)",
  },
  { flags: '-q, --quiet', long: '--quiet', short: '-q', description: 'print nothing on success' },
];

/** Flags whose value is the next argument: the argv pre-scan must skip that value. */
export const GLOBAL_FLAGS_WITH_VALUE: ReadonlySet<string> = new Set(
  SPECS.filter((s) => s.flags.includes('<')).flatMap((s) => (s.short ? [s.long, s.short] : [s.long])),
);

const globalOptions = new WeakSet<Option>();

/** Adds the global options to `cmd`, leaving out any whose long or short flag `taken` already holds. */
export function addGlobalOptions(cmd: Command, taken: ReadonlySet<string> = new Set()): void {
  for (const spec of SPECS) {
    if (taken.has(spec.long)) continue;
    const flags =
      spec.short && taken.has(spec.short) ? spec.flags.replace(`${spec.short}, `, '') : spec.flags;
    const option = new Option(flags, spec.description).helpGroup('Global options:');
    if (spec.choices) option.choices(spec.choices);
    globalOptions.add(option);
    cmd.addOption(option);
  }
}

/** Global flags given on the command line, the leaf's occurrence winning over the root's. */
export function collectGlobalFlags(leaf: Command): GlobalFlags {
  const chain: Command[] = [];
  for (let c: Command | null = leaf; c; c = c.parent) chain.unshift(c);
  const flags: Record<string, unknown> = {};
  for (const cmd of chain) {
    for (const option of cmd.options) {
      if (!globalOptions.has(option)) continue;
      const key = option.attributeName();
      if (cmd.getOptionValueSource(key) === 'cli') flags[key] = cmd.getOptionValue(key);
    }
  }
  return flags as GlobalFlags;
}
