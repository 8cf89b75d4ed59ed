// Programs of this host the local substrate runs, found on PATH as a shell would (so a host without
// Debian's tigervnc-standalone-server, or a PATH without it, is a host without screens).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findProgram(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** PATH plus the sbin directories, where Debian puts iproute2 and iptables (a root shell has them; a service may not). */
export function searchPath(): string {
  return [process.env.PATH ?? '', '/usr/sbin', '/sbin'].join(':');
}
