// The name of a credential (a personal API token, an application): 1 to 64 characters once the
// surrounding white space is trimmed (seed "Personal API tokens and delegations").
import { invalidFieldValue } from '../../http/errors.js';

const NAME_MAX = 64;

export function credentialName(raw: string, what: string): string {
  const name = raw.trim();
  if (name.length < 1 || [...name].length > NAME_MAX) {
    throw invalidFieldValue(`${what} name is 1 to ${NAME_MAX} characters after trimming.`, [
      { location: 'body', pointer: '/name', message: `1-${NAME_MAX} characters after trimming` },
    ]);
  }
  return name;
}
