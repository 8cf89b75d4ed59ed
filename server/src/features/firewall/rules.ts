// The firewall's rules of values (document 2 §2 "Firewall rule", §4 "Firewall", §8): one module of pure
// functions, so create, replace and update refuse exactly the same things. A rule is checked whole: an
// update merges its fields over the stored rule first, then the result is checked here.

export const MAX_RULES_PER_DIRECTION = 50;
const DESCRIPTION_MAX = 255;
const PRIORITY_MAX = 65535;
/** No broader than /8 (document 2 §8). */
const PREFIX_MIN = 8;

export type Direction = 'ingress' | 'egress';
export type Action = 'allow' | 'block';
export type Protocol = 'tcp' | 'udp' | 'icmp' | 'any';

/** A rule as the caller describes it (absent fields are undefined, cleared ones null). */
export interface RuleInput {
  action: Action;
  direction: Direction;
  protocol: Protocol;
  priority: number;
  enabled?: boolean;
  description?: string | null;
  cidr?: string | null;
  port_from?: number | null;
  port_to?: number | null;
}

/** A rule as stored: canonical, every field present. */
export interface RuleValues {
  action: Action;
  direction: Direction;
  protocol: Protocol;
  priority: number;
  enabled: boolean;
  description: string | null;
  cidr: string | null;
  port_from: number | null;
  port_to: number | null;
}

export interface RuleProblem {
  /** Relative to the rule: `/cidr`, `/port_to`. */
  pointer: string;
  message: string;
}

export type Checked = { ok: true; rule: RuleValues } | { ok: false; problems: RuleProblem[] };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const OCTET = /^(0|[1-9]\d{0,2})$/;

/** `a.b.c.d/n` or `a.b.c.d` (a /32), canonical with host bits zeroed; a message when it is refused. */
export function canonicalCidr(text: string): { cidr: string } | { problem: string } {
  const [address, prefixText, extra] = text.trim().split('/');
  if (extra !== undefined || address === undefined)
    return { problem: 'must be an IPv4 network such as 10.0.0.0/24' };
  const octets = address.split('.');
  if (octets.length !== 4 || !octets.every((o) => OCTET.test(o) && Number(o) <= 255)) {
    return { problem: 'must be an IPv4 address or network such as 10.0.0.0/24 (IPv6 is not supported)' };
  }
  let prefix = 32;
  if (prefixText !== undefined) {
    if (!/^\d{1,2}$/.test(prefixText) || Number(prefixText) > 32)
      return { problem: 'the prefix length must be 0-32' };
    prefix = Number(prefixText);
  }
  if (prefix < PREFIX_MIN) return { problem: `must be no broader than /${PREFIX_MIN}` };
  const value = octets.reduce((acc, o) => acc * 256 + Number(o), 0);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const network = (value & mask) >>> 0;
  const canonical = [24, 16, 8, 0].map((shift) => (network >>> shift) & 255).join('.');
  return { cidr: `${canonical}/${prefix}` };
}

export function checkRule(input: RuleInput): Checked {
  const problems: RuleProblem[] = [];
  const ranged = input.protocol === 'tcp' || input.protocol === 'udp';
  const from = input.port_from ?? null;
  const to = input.port_to ?? null;
  if (ranged) {
    if (from === null)
      problems.push({ pointer: '/port_from', message: `${input.protocol} rules need a port range` });
    if (to === null)
      problems.push({ pointer: '/port_to', message: `${input.protocol} rules need a port range` });
    for (const [pointer, port] of [
      ['/port_from', from],
      ['/port_to', to],
    ] as const) {
      if (port !== null && (port < 1 || port > 65535)) problems.push({ pointer, message: 'must be 1-65535' });
    }
    if (from !== null && to !== null && from > to) {
      problems.push({ pointer: '/port_to', message: 'must not be below port_from' });
    }
  } else {
    if (from !== null)
      problems.push({ pointer: '/port_from', message: `${input.protocol} rules carry no port range` });
    if (to !== null)
      problems.push({ pointer: '/port_to', message: `${input.protocol} rules carry no port range` });
  }
  if (!Number.isInteger(input.priority) || input.priority < 0 || input.priority > PRIORITY_MAX) {
    problems.push({ pointer: '/priority', message: `must be 0-${PRIORITY_MAX}` });
  }
  let cidr: string | null = null;
  if (input.cidr !== undefined && input.cidr !== null && input.cidr.trim() !== '') {
    const parsed = canonicalCidr(input.cidr);
    if ('problem' in parsed) problems.push({ pointer: '/cidr', message: parsed.problem });
    else cidr = parsed.cidr;
  }
  let description: string | null = null;
  if (input.description !== undefined && input.description !== null && input.description.trim() !== '') {
    description = input.description.trim();
    if ([...description].length > DESCRIPTION_MAX) {
      problems.push({ pointer: '/description', message: `must be at most ${DESCRIPTION_MAX} characters` });
    } else if (CONTROL.test(description)) {
      problems.push({ pointer: '/description', message: 'must not contain control characters' });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    rule: {
      action: input.action,
      direction: input.direction,
      protocol: input.protocol,
      priority: input.priority,
      enabled: input.enabled ?? true,
      description,
      cidr,
      port_from: ranged ? from : null,
      port_to: ranged ? to : null,
    },
  };
}

/** An update's fields over the stored rule: absent keeps, null clears. */
export function mergeUpdate(stored: RuleValues, update: Partial<RuleInput>): RuleInput {
  const merged: RuleInput = { ...stored };
  for (const key of Object.keys(update) as (keyof RuleInput)[]) {
    if (update[key] !== undefined) (merged as unknown as Record<string, unknown>)[key] = update[key];
  }
  return merged;
}

/** How many rules per direction a set holds, and the first direction over the ceiling (or null). */
export function overCeiling(rules: Pick<RuleValues, 'direction'>[]): Direction | null {
  for (const direction of ['ingress', 'egress'] as const) {
    if (rules.filter((r) => r.direction === direction).length > MAX_RULES_PER_DIRECTION) return direction;
  }
  return null;
}

/** Evaluation order: ingress before egress, then ascending priority, then age, then id. */
export function evaluationOrder<
  T extends { direction: Direction; priority: number; created_at: Date; id: string },
>(rules: T[]): T[] {
  return [...rules].sort(
    (a, b) =>
      (a.direction === b.direction ? 0 : a.direction === 'ingress' ? -1 : 1) ||
      a.priority - b.priority ||
      a.created_at.getTime() - b.created_at.getTime() ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}
