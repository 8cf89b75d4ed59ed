// The files routes' `path` (in the query, or in a body) is a path within a volume. DECISIONS.md §6 and
// §8 answer every unsafe one 400 `invalid-path`, so a client handles one code, whichever layer caught
// it: the NUL check every request passes (bind.ts), the validator's checks (problems.ts), or the
// file layer itself.
import type { FileLayerCode } from '../substrate/local/files/errors.js';
import { ApiError, type ValidationIssue } from './errors.js';

/** The file layer's refusals as HTTP statuses, for the API's file routes and the gateway's alike. */
export const FILE_LAYER_STATUS: Readonly<Record<FileLayerCode, number>> = {
  'invalid-path': 400,
  'not-found': 404,
  'file-too-large': 422,
  'file-not-text': 422,
  'mount-root': 422,
  'directory-not-empty': 409,
  'not-a-directory': 422,
  'is-a-directory': 422,
};

const FILES_ROUTE = /\/resources\/[^/]+\/files(?:\/|$)/;

/** Whether `issue`, on the route `route` (a template or a URL path), is about a file's path. */
export function isFilePathIssue(route: string, issue: { location: string; pointer: string }): boolean {
  if (!FILES_ROUTE.test(route)) return false;
  return issue.location === 'query'
    ? issue.pointer === 'path'
    : issue.location === 'body' && issue.pointer === '/path';
}

/** The refusal for `issues` when each is about a file's path on a files route; else null. */
export function asInvalidPath(route: string, issues: readonly ValidationIssue[]): ApiError | null {
  if (issues.length === 0 || !issues.every((i) => isFilePathIssue(route, i))) return null;
  return new ApiError(400, 'invalid-path', 'The path is not a safe path within the volume.', {
    errors: [...issues],
  });
}
