// Reading a refusal: the status and code of an SDK call that failed, or 'ok'.
import { SvcApiError } from '@svcplatform/sdk';

export async function outcome(p: Promise<unknown>): Promise<[number, string] | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof SvcApiError) return [e.status, e.code];
    throw e;
  }
}

/** The SvcApiError a call failed with; fails the test when it succeeded. */
export async function refusal(p: Promise<unknown>): Promise<SvcApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SvcApiError) return e;
    throw e;
  }
  throw new Error('expected the call to be refused, it succeeded');
}
