// RFC 6901 JSON pointers, for the local `#/...` references an OpenAPI document uses.

export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Follows `#/a/b~1c` inside `root`; throws on a reference that leaves the document or points nowhere. */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) throw new Error(`only local references are supported, got "${ref}"`);
  const tokens = ref === '#' ? [] : ref.slice(2).split('/');
  let cur: unknown = root;
  for (const raw of tokens) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !(token in cur))
      throw new Error(`unresolvable reference "${ref}"`);
    cur = (cur as Record<string, unknown>)[token];
  }
  return cur;
}
