// Where svcctl keeps config.yaml and credentials.yaml. XDG Base Directory rules: an absolute
// $XDG_CONFIG_HOME, else ~/.config (https://specifications.freedesktop.org/basedir-spec/latest/).
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export type Env = Readonly<Record<string, string | undefined>>;

export function configDir(env: Env = process.env): string {
  if (env.SVCCTL_CONFIG_DIR) return env.SVCCTL_CONFIG_DIR;
  const xdg = env.XDG_CONFIG_HOME;
  // The spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'svcctl');
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'svcctl');
  return join(env.HOME || homedir(), '.config', 'svcctl');
}

export const configFile = (dir: string): string => join(dir, 'config.yaml');
export const credentialsFile = (dir: string): string => join(dir, 'credentials.yaml');
