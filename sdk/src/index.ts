// The package's public API. Everything a consumer may import is named here.
export { createClient, DEFAULT_TIMEOUT_MS } from './client.js';
export type { ClientOptions, SvcClient, SvcClientCore } from './client.js';
export type { TokenSource } from './auth.js';
export {
  openConsoleSocket,
  openScreenSocket,
  openShellSocket,
  openSocket,
  PTY_SUBPROTOCOL,
  resizeShell,
  SvcSocketRefused,
} from './sockets.js';
export type { ShellControl, ShellOptions, SocketOptions } from './sockets.js';
export { createSessionClient, DEFAULT_REFRESH_AHEAD_MS } from './session.js';
export type {
  SessionClient,
  SessionClientOptions,
  SessionEndReason,
  SessionMethods,
  SessionTokens,
} from './session.js';
export {
  SvcError,
  SvcApiError,
  SvcNetworkError,
  SvcTimeoutError,
  isSvcError,
  isSvcApiError,
  isSvcNetworkError,
  isSvcTimeoutError,
} from './errors.js';
// For callers of `client.raw` (svcctl api) to read failures exactly as the generated methods do.
export { apiErrorFromResponse } from './problem.js';
export type {
  ErrorCode,
  Problem,
  SvcApiErrorInit,
  SvcErrorCode,
  SvcErrorKind,
  ValidationIssue,
} from './errors.js';
export type {
  BinaryBody,
  ExtraHeaders,
  LooseOperationId,
  LooseParams,
  OperationArgs,
  OperationMethods,
  OperationParams,
  OperationResult,
  RawBody,
  RequestOptions,
} from './operation-types.js';
export { operations } from './generated/operations.js';
export type { OperationId, OperationIndexEntry } from './generated/operations.js';
export type { components, paths, operations as ApiOperations } from './generated/api.js';
export type { UploadFile, UploadOptions } from './upload.js';
export type { PageItem, PagedOperationId, PaginateArgs, PaginateParams } from './paginate.js';
export type {
  FinalOperationStatus,
  FinishedOperation,
  WaitForOperationOptions,
} from './wait-for-operation.js';
export { SDK_VERSION } from './version.js';
