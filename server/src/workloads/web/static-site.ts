// The web app's static file server for its volume's public/ (DECISIONS.md §8 "A web app serves what its
// volume holds"): `send` (the library under Express's static) answers with the content type by
// extension, ETag, Last-Modified, conditional GET and Range. What it does not do is ours: every path is
// resolved with realpath and must stay under public/, so a link planted in the volume never serves a file
// outside it; a directory serves its index.html (itself checked), and without the trailing slash redirects.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import send from 'send';

export type Resolved = { file: string } | { redirect: string } | null;

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

async function realFile(root: string, path: string): Promise<string | null> {
  const real = await realpath(path).catch(() => null);
  return real && inside(root, real) ? real : null;
}

/**
 * The file under `root` (a real path) that `pathname` (as requested, still URL-encoded) names, a
 * redirect to the directory's own URL, or null (a 404): missing, outside, a dot name, not a file.
 */
export async function resolvePublic(root: string, pathname: string): Promise<Resolved> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const segments = decoded.split('/').filter((s) => s !== '' && s !== '.');
  // Dot names (.env, .git) are never served, but for RFC 8615's /.well-known/; `..` never climbs.
  if (segments.some((s, i) => s.startsWith('.') && !(i === 0 && s === '.well-known'))) return null;
  const real = await realFile(root, resolve(root, ...segments));
  if (!real) return null;
  const info = await stat(real).catch(() => null);
  if (info?.isDirectory()) {
    if (!pathname.endsWith('/')) return { redirect: `${pathname}/` };
    const index = await realFile(root, resolve(real, 'index.html'));
    const indexInfo = index ? await stat(index).catch(() => null) : null;
    return index && indexInfo?.isFile() ? { file: index } : null;
  }
  return info?.isFile() ? { file: real } : null;
}

function plain(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(text);
}

/** A request handler serving `publicDir` (relative to the working directory: the volume). */
export function staticSite(publicDir: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    void (async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        plain(res, 405, 'Method Not Allowed\n', { allow: 'GET, HEAD' });
        return;
      }
      const root = await realpath(resolve(publicDir)).catch(() => null);
      const pathname = (req.url ?? '/').split('?')[0]!;
      const found = root && pathname.startsWith('/') ? await resolvePublic(root, pathname) : null;
      if (!found) return plain(res, 404, 'Not Found\n');
      if ('redirect' in found) return plain(res, 301, 'Moved Permanently\n', { location: found.redirect });
      // The resolved file, named from the root as send wants it (URL-encoded, each segment).
      const path = `/${relative(root!, found.file).split(sep).map(encodeURIComponent).join('/')}`;
      send(req, path, { root: root!, index: false, dotfiles: 'allow' })
        .on('error', (err: { status?: number }) =>
          plain(res, err.status ?? 500, err.status === 404 ? 'Not Found\n' : 'Error\n'),
        )
        .pipe(res);
    })().catch(() => {
      if (!res.headersSent) plain(res, 500, 'Error\n');
      else res.destroy();
    });
  };
}
