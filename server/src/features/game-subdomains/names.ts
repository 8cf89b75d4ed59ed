// The rules of a game subdomain's label (document 2 §4 "Game subdomains": 3-32 characters a-z, 0-9,
// inner hyphens, lowercased). Pure; the handlers turn a refusal into `invalid_subdomain`.
const LABEL = /^[a-z0-9][a-z0-9-]{1,30}[a-z0-9]$/;

export function parseSubdomain(
  input: string,
): { ok: true; subdomain: string } | { ok: false; reason: string } {
  const subdomain = input.trim().toLowerCase();
  if (subdomain.length < 3 || subdomain.length > 32) {
    return { ok: false, reason: 'A game subdomain has 3 to 32 characters.' };
  }
  if (!LABEL.test(subdomain)) {
    return {
      ok: false,
      reason:
        'A game subdomain holds letters a-z, digits and hyphens, and neither starts nor ends with a hyphen.',
    };
  }
  return { ok: true, subdomain };
}
