// The flags of an operation's command: one per query parameter, header parameter and body field.
// Path parameters are positionals instead (see pathParameters).
import { flagFor } from './flag-names.js';
import { isPagedOperation, type CliOperation } from './operation.js';

export interface FlagInput {
  readonly location: 'query' | 'header' | 'body';
  readonly name: string;
  /** The long flag, `--error-id`. */
  readonly flag: string;
  readonly type: string;
  readonly required: boolean;
  readonly description: string;
  readonly nullable: boolean;
}

/** Flags of the command itself; an input whose flag would collide gets its location as a prefix. */
export const RESERVED_LEAF_FLAGS: ReadonlySet<string> = new Set(['--help', '--data', '--output']);

/** Every page of a paged list, streamed. */
export const ALL_FLAG = '--all';

export function flagInputs(op: CliOperation): FlagInput[] {
  const raw: Omit<FlagInput, 'flag'>[] = [
    ...op.parameters
      .filter((p) => p.in === 'query' || p.in === 'header')
      .map((p) => ({
        location: p.in as 'query' | 'header',
        name: p.name,
        type: p.type,
        required: p.required,
        description: p.description,
        nullable: p.nullable === true,
      })),
    ...(op.body?.fields ?? []).map((f) => ({
      location: 'body' as const,
      name: f.name,
      type: f.type,
      required: f.required,
      description: f.description,
      nullable: f.nullable === true,
    })),
  ];
  const taken = new Set<string>(RESERVED_LEAF_FLAGS);
  // A paged list's command has --all of its own (commands/operation-command.ts).
  if (isPagedOperation(op)) taken.add(ALL_FLAG);
  const inputs: FlagInput[] = [];
  for (const input of raw) {
    let flag = flagFor(input.location, input.name);
    // Booleans also claim `--no-<name>`, so that spelling must be free as well.
    if (taken.has(flag) || taken.has(negated(flag))) flag = `--${input.location}-${flag.slice(2)}`;
    taken.add(flag);
    if (input.type === 'boolean') taken.add(negated(flag));
    inputs.push({ ...input, flag });
  }
  return inputs;
}

export function negated(flag: string): string {
  return `--no-${flag.slice(2)}`;
}
