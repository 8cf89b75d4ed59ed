// config.yaml: per-profile settings. Unknown keys are kept on rewrite, so a newer svcctl's settings
// survive an older one's `config set`.
//
//   profiles:
//     default:
//       base_url: https://api.example.com
//       output: table
import { OUTPUT_FORMATS, type OutputFormat } from './global-options.js';
import { configFile } from './config-dir.js';
import { CliError } from './errors.js';
import { readYamlFile, writeYamlFile, type YamlDocument } from './yaml-file.js';

export interface ProfileConfig {
  base_url?: string;
  output?: OutputFormat;
}

/** The settings `svcctl config set` accepts, by their command-line spelling. */
export const CONFIG_KEYS = {
  'base-url': 'base_url',
  output: 'output',
} as const satisfies Record<string, keyof ProfileConfig>;

export type ConfigKey = keyof typeof CONFIG_KEYS;

export async function readConfigDocument(dir: string): Promise<YamlDocument> {
  return (await readYamlFile(configFile(dir))) ?? {};
}

export function profilesOf(doc: YamlDocument, file: string): Record<string, Record<string, unknown>> {
  const profiles = doc.profiles ?? {};
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) {
    throw new CliError(`${file}: "profiles" must be a mapping of profile names`);
  }
  return profiles as Record<string, Record<string, unknown>>;
}

export async function readProfileConfig(dir: string, profile: string): Promise<ProfileConfig> {
  const file = configFile(dir);
  const raw = profilesOf(await readConfigDocument(dir), file)[profile] ?? {};
  const out: ProfileConfig = {};
  if (raw.base_url !== undefined) {
    if (typeof raw.base_url !== 'string')
      throw new CliError(`${file}: profiles.${profile}.base_url must be a string`);
    out.base_url = raw.base_url;
  }
  if (raw.output !== undefined) {
    if (!OUTPUT_FORMATS.includes(raw.output as OutputFormat)) {
      throw new CliError(`${file}: profiles.${profile}.output must be one of ${OUTPUT_FORMATS.join(', ')}`);
    }
    out.output = raw.output as OutputFormat;
  }
  return out;
}

/** Sets (or with `undefined`, removes) one key of one profile. */
export async function updateProfileConfig(
  dir: string,
  profile: string,
  key: keyof ProfileConfig,
  value: string | undefined,
): Promise<void> {
  const doc = await readConfigDocument(dir);
  const profiles = profilesOf(doc, configFile(dir));
  const entry = { ...(profiles[profile] ?? {}) };
  if (value === undefined) delete entry[key];
  else entry[key] = value;
  doc.profiles = { ...profiles, [profile]: entry };
  // Not secret, but nobody else needs to write it either.
  await writeYamlFile(configFile(dir), doc, 0o644);
}
