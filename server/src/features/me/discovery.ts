// Discovery keys (seed document 1, "Discovery ledger"): `<kind>:<path>`, lowercase, [a-z0-9/_-] after
// the colon, at most 96 characters, kind one of nav, tab, product, ui.
export const DISCOVERY_KEY_MAX = 96;
export const DISCOVERY_KEYS_PER_CALL = 20;

const KEY = /^(nav|tab|product|ui):[a-z0-9/_-]+$/;

export const isDiscoveryKey = (key: string): boolean => key.length <= DISCOVERY_KEY_MAX && KEY.test(key);
