// The name of an organization or a project (spec OrganizationName): 1 to 100 characters after trimming
// surrounding spaces, without control characters. Refusals are 400 invalid-field-value on /name.
import { invalidFieldValue } from '../../http/errors.js';

const NAME_MAX = 100;

export function displayName(raw: string): string {
  const name = raw.trim();
  let reason: string | null = null;
  if (name.length === 0) reason = 'empty';
  else if ([...name].length > NAME_MAX) reason = 'too long';
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) reason = 'a control character';
  if (reason === null) return name;
  throw invalidFieldValue(
    `The name must be 1 to ${NAME_MAX} characters after trimming, without control characters.`,
    [{ location: 'body', pointer: '/name', message: reason }],
  );
}
