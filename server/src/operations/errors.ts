// Why an operation failed, in words its caller may read. Anything else that goes wrong is logged and
// shown as a generic sentence: an operation's `error` never carries a stack, a path or SQL.
export class OperationError extends Error {
  /** permanent: retrying cannot help (the unit refused its contract); fail now instead of retrying. */
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'OperationError';
  }
}

export const GENERIC_FAILURE = 'The operation failed on the platform; its operators have the details.';
