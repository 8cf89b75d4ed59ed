// The `svcctl config` commands.
import type { ParsedInput } from './argv/spec.js';
import { configFile, credentialsFile } from './config-dir.js';
import {
  CONFIG_KEYS,
  profilesOf,
  readConfigDocument,
  readProfileConfig,
  updateProfileConfig,
  type ConfigKey,
} from './config-file.js';
import { credentialProfiles } from './credentials.js';
import { UsageError } from './errors.js';
import { OUTPUT_FORMATS, type GlobalFlags, type OutputFormat } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { normalizeBaseUrl, resolveSettings, type Settings } from './settings.js';

export async function configSet(input: ParsedInput): Promise<void> {
  const [key = '', value = ''] = input.args;
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const field = CONFIG_KEYS[checkKey(key)];
  let stored = value;
  if (field === 'base_url') stored = normalizeBaseUrl(value);
  if (field === 'output' && !OUTPUT_FORMATS.includes(value as OutputFormat)) {
    throw new UsageError(`output must be one of ${OUTPUT_FORMATS.join(', ')}; got "${value}"`);
  }
  await updateProfileConfig(settings.configDir, settings.profile, field, stored);
  if (!settings.quiet)
    process.stderr.write(
      `set ${key} = ${stored} for profile "${settings.profile}" in ${configFile(settings.configDir)}\n`,
    );
}

export async function configUnset(input: ParsedInput): Promise<void> {
  const [key = ''] = input.args;
  const settings = await resolveSettings(input.globals as GlobalFlags);
  await updateProfileConfig(settings.configDir, settings.profile, CONFIG_KEYS[checkKey(key)], undefined);
  if (!settings.quiet) process.stderr.write(`unset ${key} for profile "${settings.profile}"\n`);
}

export async function configGet(input: ParsedInput): Promise<void> {
  const [key] = input.args;
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const view = effectiveView(settings);
  if (key === undefined) return writeResult(view, settings);
  const name = key.replace(/-/g, '_') as keyof typeof view;
  if (!(name in view))
    throw new UsageError(
      `unknown key "${key}"; known: ${Object.keys(view)
        .map((k) => k.replace(/_/g, '-'))
        .join(', ')}`,
    );
  // One value prints bare in every format, so `$(svcctl config get base-url)` just works.
  if (!settings.quiet) process.stdout.write(`${String(view[name])}\n`);
}

export async function configProfiles(input: ParsedInput): Promise<void> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const dir = settings.configDir;
  const configured = profilesOf(await readConfigDocument(dir), configFile(dir));
  const withCredentials = new Set(await credentialProfiles(dir));
  const names = [...new Set([...Object.keys(configured), ...withCredentials, settings.profile])].sort();
  const rows = await Promise.all(
    names.map(async (name) => {
      const stored = await readProfileConfig(dir, name);
      return {
        name,
        current: name === settings.profile,
        base_url: stored.base_url ?? null,
        output: stored.output ?? null,
        credentials: withCredentials.has(name),
      };
    }),
  );
  await writeResult(rows, settings);
}

function checkKey(key: string): ConfigKey {
  const normalized = key.replace(/_/g, '-');
  if (!Object.hasOwn(CONFIG_KEYS, normalized)) {
    throw new UsageError(`unknown setting "${key}"; settable: ${Object.keys(CONFIG_KEYS).join(', ')}`);
  }
  return normalized as ConfigKey;
}

function effectiveView(settings: Settings) {
  return {
    profile: settings.profile,
    base_url: settings.baseUrl,
    output: settings.outputFormat,
    token: settings.tokenSource ? `set (from ${settings.tokenSource})` : 'not set',
    config_dir: settings.configDir,
    config_file: configFile(settings.configDir),
    credentials_file: credentialsFile(settings.configDir),
  };
}
