// The platform's runtime files a confined program may need (the catalog's programs run on the platform's
// Node with its packages): mounted read-only under /.svc, never taken from the volume. Only what programs
// run from is there, named one by one: the checkout also holds DATA_DIR by default (the encryption key,
// every volume), which must never be inside a unit.
import { dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../../../', import.meta.url)).replace(/\/$/, '');
const REPO_PARTS = ['node_modules', 'server', 'generated', 'package.json', 'tsconfig.json'];
export const RUNTIME_DIR = '/.svc';
const INSIDE_REPO = `${RUNTIME_DIR}/runtime`;
const INSIDE_NODE = `${RUNTIME_DIR}/node`;

/** Node's installation directory, when it is not part of /usr (which every unit has already). */
function nodePrefix(): string | null {
  const prefix = dirname(dirname(process.execPath));
  return prefix === '/usr' || prefix.startsWith('/usr/') ? null : prefix;
}

/** The runtime's parts: where each is on the host and where the confined program finds it. */
export function runtimeSources(): { host: string; inside: string }[] {
  const prefix = nodePrefix();
  return [
    ...REPO_PARTS.map((part) => ({ host: `${REPO_ROOT}/${part}`, inside: `${INSIDE_REPO}/${part}` })),
    ...(prefix ? [{ host: prefix, inside: INSIDE_NODE }] : []),
  ];
}

/** A host path of the runtime (or a file: URL of one) as the confined program sees it. */
export function insidePath(arg: string): string {
  const prefix = nodePrefix();
  const swap = (path: string): string => {
    if (path === REPO_ROOT || path.startsWith(REPO_ROOT + sep))
      return INSIDE_REPO + path.slice(REPO_ROOT.length);
    if (prefix && path.startsWith(prefix + sep)) return INSIDE_NODE + path.slice(prefix.length);
    return path;
  };
  if (arg.startsWith('file://')) return `file://${swap(fileURLToPath(arg))}`;
  return swap(arg);
}

/** The platform's Node as the confined program sees it. */
export function insideNode(): string {
  return insidePath(process.execPath);
}
