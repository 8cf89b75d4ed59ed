// Errors svcctl raises itself. Errors from the API arrive as the SDK's SvcError subclasses and are
// described by describe-failure.ts.
import { ExitCode } from './exit-codes.js';

/** The command line itself is wrong: exit 2, no request was sent. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure svcctl can explain in one line, with the exit code it maps to. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.failure,
  ) {
    super(message);
  }
}
