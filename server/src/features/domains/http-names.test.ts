import { describe, expect, it } from 'vitest';
import { parseHttpHostname } from './http-names.js';

describe('parseHttpHostname (document 2 §4 "Custom domains" attach rules)', () => {
  it.each([
    ['  Shop.Example.COM. ', 'shop.example.com'],
    ['a.b', 'a.b'],
    ['x-1.example.com', 'x-1.example.com'],
    [`${'a'.repeat(63)}.example.com`, `${'a'.repeat(63)}.example.com`],
  ])('accepts %j as %j', (input, hostname) => {
    expect(parseHttpHostname(input)).toEqual({ ok: true, hostname });
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['.', 'empty'],
    [`${'a.'.repeat(127)}com`, 'over 253'],
    ['10.0.0.1', 'IPv4 literal'],
    ['[::1]', 'IPv6 literal'],
    ['::1', 'IPv6 literal'],
    ['localhost', 'single label'],
    ['a..example.com', 'empty label'],
    ['.example.com', 'empty label'],
    [`${'a'.repeat(64)}.example.com`, 'label over 63'],
    ['-a.example.com', 'hyphen at the start'],
    ['a-.example.com', 'hyphen at the end'],
    ['a_b.example.com', 'underscore'],
    ['bücher.example', 'non-ASCII'],
    ['a b.example.com', 'space'],
    ['example.com/x', 'slash'],
  ])('refuses %j (%s)', (input) => {
    const parsed = parseHttpHostname(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason.length).toBeGreaterThan(0);
  });
});
