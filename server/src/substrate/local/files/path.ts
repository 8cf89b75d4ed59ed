// The file layer's paths (DECISIONS.md §6 "Files"): absolute within the volume, normalised here, and
// refused whole when they name `..`, hold a NUL byte or fall under /proc, /sys or /dev. Refusing `..`
// outright (rather than resolving it) is what lets the walk (walk.ts) go only downwards.
import { FileLayerError } from './errors.js';

/** The kernel's limit on one name; a longer one could never exist, so it is refused like `..`. */
const NAME_MAX = 255;
const PATH_MAX = 4096;
const SYSTEM_PREFIXES = new Set(['proc', 'sys', 'dev']);

export interface VolumePath {
  /** The normalised absolute path: `/` joined with the components (`/` for the root). */
  path: string;
  /** The components, root first; empty for the root. */
  parts: string[];
}

export function parseVolumePath(raw: string): VolumePath {
  if (!raw.startsWith('/')) throw invalid('The path must be absolute (start with /).');
  if (raw.includes('\0')) throw invalid('The path holds a NUL byte.');
  if (raw.length > PATH_MAX) throw invalid(`The path is longer than ${PATH_MAX} characters.`);
  const parts: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') throw invalid('The path may not contain "..".');
    if (Buffer.byteLength(part) > NAME_MAX)
      throw invalid(`A name in the path is longer than ${NAME_MAX} bytes.`);
    parts.push(part);
  }
  if (parts.length > 0 && SYSTEM_PREFIXES.has(parts[0]!)) {
    throw invalid(`Paths under /${parts[0]} are refused.`);
  }
  return { path: `/${parts.join('/')}`, parts };
}

function invalid(detail: string): FileLayerError {
  return new FileLayerError('invalid-path', detail);
}
