// The name of an organization or a project (spec OrganizationName): 1 to 100 characters after trimming
// surrounding spaces, holding none of the characters no name may hold (me/name-rules.ts: controls,
// format, bidi and zero-width characters), the one character rule of every name a person gives
// (DECISIONS.md §7). Refusals are 400 invalid-field-value on /name.
import { invalidFieldValue } from '../../http/errors.js';
import { hiddenCharacter } from '../me/name-rules.js';

const NAME_MAX = 100;

export function displayName(raw: string): string {
  const name = raw.trim().normalize('NFC');
  let reason: string | null = null;
  if (name.length === 0) reason = 'empty';
  else if ([...name].length > NAME_MAX) reason = 'too long';
  else {
    const hidden = hiddenCharacter(name);
    if (hidden !== null) reason = `holds ${hidden} (a control, format, bidi or zero-width character)`;
  }
  if (reason === null) return name;
  throw invalidFieldValue(
    `The name must be 1 to ${NAME_MAX} characters after trimming, without control, format, bidi or zero-width characters.`,
    [{ location: 'body', pointer: '/name', message: reason }],
  );
}
