// The keys of a `PUT .../access/ssh-keys` request, each checked (ssh-keys.ts), none twice: the whole list
// or a 400 naming every entry refused, so a refused request changes nothing.
import { invalidFieldValue } from '../../http/errors.js';
import { parseSshKey, type SshKey } from './ssh-keys.js';

export function keysOf(keys: readonly { name?: string; public_key: string }[]): SshKey[] {
  const parsed: SshKey[] = [];
  const problems: { location: 'body'; pointer: string; message: string }[] = [];
  const seen = new Set<string>();
  keys.forEach((entry, i) => {
    const key = parseSshKey(entry.public_key, entry.name);
    if (typeof key === 'string') {
      problems.push({ location: 'body', pointer: `/keys/${i}/public_key`, message: key });
    } else if (seen.has(key.fingerprint)) {
      problems.push({
        location: 'body',
        pointer: `/keys/${i}/public_key`,
        message: 'this key is listed twice',
      });
    } else {
      seen.add(key.fingerprint);
      parsed.push(key);
    }
  });
  if (problems.length > 0) {
    throw invalidFieldValue(
      'Each key must be one OpenSSH public key line of a supported type, listed once.',
      problems,
    );
  }
  return parsed;
}
