// Multipart uploads: the one request body that is not JSON (DECISIONS.md §1, "multipart part `file`").
//
// The validator runs without an upload parser of its own (validator.ts, `fileUploader: false`) and
// checks a multipart body as the object its parser would have left: with nothing read it refuses
// every upload as missing `file`. Reading the body before the validator would make the server buffer
// up to 10 MB for callers it does not know yet, so the work is split in two:
//
// - `prepareMultipart` runs where the validator's own uploader would (after its route metadata, before
//   it checks the request): for an operation whose request body is multipart/form-data, sent as
//   multipart/form-data, it leaves the validator what its own uploader leaves for one file part
//   (`{ file: '' }`, multer's shape) and marks the request. The validator still refuses another
//   content type (and, as for any operation, the route's other parameters).
// - `readUpload` reads the marked request's body once bind.ts has authenticated the caller, streaming
//   the part `file` into a Buffer under a hard limit, and refuses a missing part, a second part or a
//   part of another name itself (400 invalid-request), so nothing reaches a handler unchecked.
import busboy, { type Busboy } from 'busboy';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, invalidRequest } from './errors.js';
import type { ValidatedRequest } from './validator.js';

/** The largest file a multipart upload may carry (spec, meAvatarUpload: "Larger than 10 MB is 413"). */
export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;
/** Room for the boundaries and the part's headers around the file. */
const ENVELOPE_MAX_BYTES = 64 * 1024;
const BODY_MAX_BYTES = UPLOAD_MAX_BYTES + ENVELOPE_MAX_BYTES;
/** The one part an upload carries. */
const FILE_PART = 'file';

export interface UploadedFile {
  /** The part's bytes, at most UPLOAD_MAX_BYTES. */
  bytes: Buffer;
  /** The file name the client gave, if any: informative only. */
  filename: string | null;
  /** The part's Content-Type as declared by the client: never trusted (images are recognised by their bytes). */
  declaredType: string | null;
}

/** What a handler of a multipart operation gets as its body (handler.ts, BodyOf). */
export interface MultipartBody {
  file: UploadedFile;
}

// ---- before validation -------------------------------------------------------------------------

const MULTIPART = /^multipart\/form-data\s*(?:;|$)/i;

/** Requests marked by prepareMultipart, whose body readUpload reads (a WeakSet: requests keep their shape). */
const pending = new WeakSet<IncomingMessage>();

/** Whether the operation the validator matched takes a multipart/form-data body. */
function takesMultipart(req: ValidatedRequest): boolean {
  const body = req.openapi?.schema.requestBody;
  return body !== undefined && 'content' in body && body.content['multipart/form-data'] !== undefined;
}

/** See the top of this file: runs between the validator's route metadata and its request check. */
export function prepareMultipart(req: Request, _res: Response, next: NextFunction): void {
  const type = req.headers['content-type'];
  if (type !== undefined && MULTIPART.test(type) && takesMultipart(req as ValidatedRequest)) {
    pending.add(req);
    req.body = { [FILE_PART]: '' };
  }
  next();
}
prepareMultipart satisfies RequestHandler;

/** Whether `req` carries a multipart body still to be read with readUpload. */
export const hasPendingUpload = (req: IncomingMessage): boolean => pending.has(req);

// ---- reading -----------------------------------------------------------------------------------

/**
 * Too large. Declared so by Content-Length, nothing is read and the connection closes after the
 * answer (Node would otherwise read the whole body to keep the connection); found so while reading,
 * the rest is discarded as for any refusal (see `linger`).
 */
const tooLarge = (close: boolean) =>
  new ApiError(413, 'payload-too-large', `The file is larger than ${UPLOAD_MAX_BYTES / (1024 * 1024)} MB.`, {
    headers: close ? { Connection: 'close' } : {},
  });

/** After a refusal mid-body, what is still read (and dropped) before the connection is cut. */
const LINGER_BYTES = 1024 * 1024;
const LINGER_MS = 2000;

/**
 * Stops parsing and buffering at once, but lets the client finish sending for a little while (reading
 * and dropping the bytes), as servers do with a lingering close: a client still sending when the
 * answer comes would otherwise meet a reset connection instead of the refusal. A body that goes on
 * past LINGER_BYTES or LINGER_MS gets its connection cut.
 */
function linger(req: IncomingMessage): void {
  let dropped = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, LINGER_MS).unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

const refused = (detail: string, message: string) =>
  invalidRequest(detail, [{ location: 'body', pointer: `/${FILE_PART}`, message }]);

/**
 * Reads a request prepareMultipart marked: exactly one part, a file named `file`, of at most
 * UPLOAD_MAX_BYTES. Anything else is refused; the reading stops at the first refusal.
 */
export function readUpload(req: IncomingMessage): Promise<MultipartBody> {
  pending.delete(req);
  const declared = Number(req.headers['content-length']);
  if (declared > BODY_MAX_BYTES) return Promise.reject(tooLarge(true));
  let parser: Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // One part, the file: a second file trips `filesLimit`, any text field `fieldsLimit` (busboy
      // emits `partsLimit` once the count is reached, so 2 means a second part of any kind).
      limits: { parts: 2, files: 1, fields: 0, fileSize: UPLOAD_MAX_BYTES, headerPairs: 16 },
      defParamCharset: 'utf8',
    });
  } catch {
    // No boundary, or a Content-Type busboy cannot read.
    return Promise.reject(invalidRequest('The multipart body has no boundary in its Content-Type.'));
  }

  return new Promise<MultipartBody>((resolve, reject) => {
    let received = 0;
    let file: UploadedFile | null = null;
    let fileOpen = false;
    let parsed = false;
    let settled = false;

    const stop = (err: ApiError | null) => {
      if (settled) return;
      settled = true;
      req.off('data', count);
      req.off('error', aborted);
      if (err) {
        // Whatever follows is never parsed nor kept. (The parser is left to the garbage collector, not
        // destroyed: this runs inside its own callbacks, which it would then trip over.)
        req.unpipe(parser);
        linger(req);
        reject(err);
      }
    };
    const finish = () => {
      if (settled || !parsed || fileOpen) return;
      if (!file) {
        stop(
          refused(
            `The upload needs a part named "${FILE_PART}" holding the file.`,
            `must have required property '${FILE_PART}'`,
          ),
        );
        return;
      }
      stop(null);
      resolve({ [FILE_PART]: file });
    };
    // The whole body, envelope included, under one ceiling: busboy's limits bound the parts, not the
    // bytes around them.
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > BODY_MAX_BYTES) stop(tooLarge(false));
    };
    const aborted = () => stop(invalidRequest('The upload was interrupted.'));

    parser.on('file', (name, stream, info) => {
      // A body cut short ends the part with an error; the parser's own 'error' says so.
      stream.on('error', () => {});
      if (name !== FILE_PART) {
        stream.resume();
        stop(refused(`Unknown part "${name}": an upload carries one part, "${FILE_PART}".`, 'unknown part'));
        return;
      }
      fileOpen = true;
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
      });
      stream.on('limit', () => {
        chunks.length = 0;
        stop(tooLarge(false));
      });
      stream.on('end', () => {
        fileOpen = false;
        if (stream.truncated) return;
        file = {
          bytes: Buffer.concat(chunks, size),
          filename: info.filename ?? null,
          declaredType: info.mimeType || null,
        };
        finish();
      });
    });
    parser.on('fieldsLimit', () =>
      stop(
        refused(
          `Every part must be a file (sent with a filename); the upload carries one, "${FILE_PART}".`,
          'must be a file part',
        ),
      ),
    );
    for (const limit of ['partsLimit', 'filesLimit'] as const) {
      parser.on(limit, () =>
        stop(refused(`An upload carries exactly one part, "${FILE_PART}".`, 'more than one part')),
      );
    }
    parser.on('error', () => stop(invalidRequest('The multipart body is malformed.')));
    parser.on('close', () => {
      parsed = true;
      finish();
    });
    req.on('data', count);
    req.on('error', aborted);
    req.pipe(parser);
  });
}
