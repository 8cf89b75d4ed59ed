// The file layer's refusals, named by the API's error codes (DECISIONS.md §2, §6 "Files") so a route
// maps them one to one. Nothing here carries a host path: details speak of the volume's own paths.
export type FileLayerCode =
  | 'invalid-path'
  | 'not-found'
  | 'file-too-large'
  | 'file-not-text'
  | 'mount-root'
  | 'directory-not-empty'
  | 'not-a-directory'
  | 'is-a-directory';

export class FileLayerError extends Error {
  constructor(
    readonly code: FileLayerCode,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'FileLayerError';
  }
}

export function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}
