// The project claims Node 20.19+ (package.json engines): every package the lock file installs must
// accept it, or `npm ci` warns EBADENGINE and the package may use what Node 20 lacks. The lowest
// version the claim admits is the one checked (a range that takes 20.19.0 takes later 20s too, or says so).
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: Record<string, string> | string[] }>;
};

it('every locked package accepts the oldest Node the project claims', () => {
  const oldest = semver.minVersion(manifest.engines.node)!.version;
  expect(oldest).toBe('20.19.0');
  const refusing = Object.entries(lock.packages)
    .filter(([path, pkg]) => path !== '' && !Array.isArray(pkg.engines) && pkg.engines?.node)
    .filter(([, pkg]) => !semver.satisfies(oldest, (pkg.engines as Record<string, string>).node!))
    .map(([path, pkg]) => `${path}@${pkg.version}: node ${(pkg.engines as Record<string, string>).node}`);
  expect(refusing).toEqual([]);
});
