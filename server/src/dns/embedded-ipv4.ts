// The IPv4 address an IPv6 literal carries (DECISIONS.md §8 "Imports against hostile servers"): the
// IPv4-compatible `::a.b.c.d` (`::127.0.0.1` is also `::7f00:1`), IPv4-mapped `::ffff:a.b.c.d`,
// IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and 6to4 `2002::/16`. A connection to such a
// literal can end at that IPv4 address (the kernel maps, a NAT64 gateway or 6to4 relay forwards), so an
// address check judges it by the IPv4 one rather than by the IPv6 ranges it sits in.
import { isIP } from 'node:net';

/** The eight 16-bit groups of an IPv6 literal (a zone id ignored), or null when it is not one. */
export function ipv6Groups(address: string): number[] | null {
  let text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return null;
  // A dotted quad at the end is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const head = parse(halves[0]);
  if (halves.length === 1) return head.length === 8 ? head : null;
  const tail = parse(halves[1]);
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/** The IPv4 address `address` embeds, or null (an IPv4 literal, or an IPv6 one of no such form). */
export function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::a.b.c.d (deprecated IPv4-compatible; `::` and `::1` land in 0.0.0.0/8, refused as they are).
  if (zeros(0, 6)) return quad(g[6]!, g[7]!);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated, SIIT).
  if (zeros(0, 5) && g[5] === 0xffff) return quad(g[6]!, g[7]!);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return quad(g[6]!, g[7]!);
  // 64:ff9b::/96, the well-known NAT64 prefix.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return quad(g[6]!, g[7]!);
  // 2002:aabb:ccdd::/48, 6to4.
  if (g[0] === 0x2002) return quad(g[1]!, g[2]!);
  return null;
}
