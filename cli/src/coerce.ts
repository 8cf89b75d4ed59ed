// Flag text → the JSON value the API expects, driven by the index's type names (see
// scripts/gen/operation-index.ts `typeName`): `integer`, `number`, `boolean`, `object`/`json`,
// `a|b|c` for enums, `T[]` for arrays, and formats such as `uuid` or `date-time` for strings.

export class CoercionError extends Error {
  override readonly name = 'CoercionError';
}

export function isArrayType(type: string): boolean {
  return type.endsWith('[]');
}

export function itemType(type: string): string {
  return type.slice(0, -2);
}

export function isEnumType(type: string): boolean {
  return type.includes('|');
}

const JSON_TYPES = new Set(['object', 'json']);

/**
 * One flag value. `null` becomes JSON null wherever a string could not mean it (numbers, objects,
 * arrays, enums that list null) and, for strings, only where the index marks the field nullable.
 */
export function coerceValue(type: string, raw: string, nullable = false): unknown {
  if (isEnumType(type) && !isArrayType(type)) {
    // The generator writes an enum that admits null with a literal `null` member.
    const values = type.split('|');
    if (!values.includes(raw)) throw new CoercionError(`expected one of ${values.join(', ')}; got "${raw}"`);
    return raw === 'null' ? null : raw;
  }
  if (raw === 'null' && (nullable || !isStringLike(type))) return null;
  if (isArrayType(type)) return coerceArrayItem(type, raw, nullable);
  switch (type) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw)) throw new CoercionError(`expected an integer; got "${raw}"`);
      const n = Number(raw);
      if (!Number.isSafeInteger(n)) throw new CoercionError(`integer out of range: ${raw}`);
      return n;
    }
    case 'number': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(n)) throw new CoercionError(`expected a number; got "${raw}"`);
      return n;
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new CoercionError(`expected true or false; got "${raw}"`);
    default:
      if (JSON_TYPES.has(type)) return parseJson(raw, 'JSON');
      return raw;
  }
}

/**
 * One occurrence of a repeatable array flag: a JSON array (`'["a","b"]'`) is taken whole, a list of
 * enum values may be comma-separated, anything else is one item, so `--tag a --tag b` and
 * `--tag '["a","b"]'` mean the same.
 */
function coerceArrayItem(type: string, raw: string, nullable: boolean): unknown[] {
  if (raw.trimStart().startsWith('[')) {
    const parsed = parseJson(raw, 'a JSON array');
    if (!Array.isArray(parsed)) throw new CoercionError(`expected a JSON array; got ${raw}`);
    return parsed;
  }
  // No enum value here holds a comma: `a,b` is two of them, as the API's comma-separated queries read
  // (`--include gamemode,position`).
  if (itemType(type).includes('|') && raw.includes(',')) {
    return raw.split(',').map((part) => coerceValue(itemType(type), part.trim(), nullable));
  }
  return [coerceValue(itemType(type), raw, nullable)];
}

/** Accumulates array occurrences; a lone `null` replaces the whole array. */
export function accumulate(type: string, raw: string, previous: unknown, nullable = false): unknown {
  const value = coerceValue(type, raw, nullable);
  if (!isArrayType(type) || value === null) return value;
  return Array.isArray(previous) ? [...previous, ...(value as unknown[])] : value;
}

function isStringLike(type: string): boolean {
  if (isArrayType(type)) return false;
  return !['integer', 'number', 'boolean', 'object', 'json'].includes(type);
}

function parseJson(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new CoercionError(`expected ${what}: ${(err as Error).message}`);
  }
}
