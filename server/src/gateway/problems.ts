// The gateway's HTTP answers in the API's error format (DECISIONS.md §2, §8): RFC 9457 problem details
// with the API's codes, so one client error path (the SDK's, svcctl's) reads both. The gateway has no
// request log of the API's; its request id is made here and sent as X-Request-Id, as the API does.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { ApiError, problemBody, type ErrorCode } from '../http/errors.js';
import { FILE_LAYER_STATUS } from '../http/file-paths.js';
import type { FileLayerError } from '../substrate/local/files/index.js';

/** A refusal of the gateway's own: its status, the API's code for it, and what went wrong. */
export const refusal = (
  status: number,
  code: ErrorCode,
  detail: string,
  headers: Record<string, string> = {},
  errors?: ApiError['extra']['errors'],
) => new ApiError(status, code, detail, { headers, ...(errors ? { errors } : {}) });

/** The file layer's refusals with the status the API's file routes answer them with. */
export const fileProblem = (err: FileLayerError) =>
  new ApiError(FILE_LAYER_STATUS[err.code], err.code, err.detail);

export function sendProblem(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const requestId = randomUUID();
  const text = JSON.stringify(problemBody(err, requestId));
  res.writeHead(err.status, {
    'content-type': 'application/problem+json',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    'x-request-id': requestId,
    ...err.extra.headers,
  });
  res.end(text);
}
