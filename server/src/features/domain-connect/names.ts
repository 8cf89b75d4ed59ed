// The names a link is asked for (document 2 §4 "Domain connect": `domain` a registrable domain, `host`
// one label or empty for the apex) and the SRV name verify reads. Pure; the handler turns a refusal
// into 400 invalid-field-value.
import { GAME_SRV_PREFIX } from '../../dns-server/zones.js';
import { parseHostname } from '../domains/names.js';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export type LinkNames =
  | { ok: true; domain: string; host: string; hostname: string }
  | { ok: false; pointer: '/domain' | '/host'; reason: string };

export function parseLinkNames(domainInput: string, hostInput: string): LinkNames {
  const parsed = parseHostname(domainInput.trim().toLowerCase());
  if (!parsed.ok) return { ok: false, pointer: '/domain', reason: parsed.reason };
  if (parsed.hostname !== parsed.registrable) {
    return {
      ok: false,
      pointer: '/domain',
      reason: `${parsed.hostname} is not a registrable domain: give ${parsed.registrable} and the rest as host.`,
    };
  }
  const host = hostInput.trim().toLowerCase().replace(/\.$/, '');
  if (host !== '' && !LABEL.test(host)) {
    return {
      ok: false,
      pointer: '/host',
      reason: 'host is one label of 1 to 63 letters, digits and inner hyphens, or empty for the apex.',
    };
  }
  const hostname = host === '' ? parsed.hostname : `${host}.${parsed.hostname}`;
  if (hostname.length > 253)
    return { ok: false, pointer: '/host', reason: 'The name has more than 253 characters.' };
  return { ok: true, domain: parsed.hostname, host, hostname };
}

/** `_minecraft._tcp.<host>.<domain>`: where the block game's clients look for the server. */
export const srvNameOf = (hostname: string): string => `${GAME_SRV_PREFIX}${hostname}`;

/** Whether `name` and `zone` overlap: one is the other or lies under it. */
export const overlaps = (name: string, zone: string): boolean =>
  name === zone || name.endsWith(`.${zone}`) || zone.endsWith(`.${name}`);
