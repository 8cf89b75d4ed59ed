// One test of "is this a uuid" for values that bypass the spec's `format: uuid` (headers, lists of
// free strings, job payloads). Case-insensitive: postgres reads either case.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);
