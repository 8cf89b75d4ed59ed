// One generated command per operation of the index: its arguments and options, built only when the
// command line reaches it. What it does when it runs is in run-operation.ts, imported then.
import type { SessionClient, SvcClient } from '@svcplatform/sdk';
import type { OptionSpec, Runnable } from '../argv/spec.js';
import { accumulate, isArrayType, isEnumType, itemType } from '../coerce.js';
import {
  argumentName,
  isBinaryResponse,
  isPagedOperation,
  pathParameters,
  type CliOperation,
} from '../operation.js';
import { ALL_FLAG, flagInputs, negated, type FlagInput } from '../operation-inputs.js';
import type { RequestParams } from '../request-input.js';

const GROUP_HEADINGS = {
  query: 'Query parameters:',
  header: 'Header parameters:',
  body: 'Body fields:',
} as const;

const REQUEST_OPTIONS = 'Request options:';

export interface BoundInput {
  input: FlagInput;
  /** Where the parser stores the flag's value. */
  key: string;
}

export interface OperationHooks {
  /** Sees the request as it is about to be sent (`members add` remembers the role it asked for). */
  sending?: (request: RequestParams) => void;
  /** Turns the answer into what is printed (`svcctl session` adds the profile's elevated_until). */
  decorate?: (result: unknown, client: SvcClient | SessionClient) => unknown | Promise<unknown>;
}

export function operationRunnable(op: CliOperation, hooks: OperationHooks = {}): Runnable {
  const bound: BoundInput[] = [];
  const options: OptionSpec[] = [];
  for (const [i, input] of flagInputs(op).entries()) {
    const key = `input${i}`;
    options.push(...optionsFor(input, key));
    bound.push({ input, key });
  }
  if (op.body) {
    options.push({
      long: '--data',
      value: '<json>',
      key: 'data',
      group: REQUEST_OPTIONS,
      description:
        'the request body as JSON: inline, @file.json (or .yaml) or @- for stdin; flags above override its fields',
    });
  }
  if (isPagedOperation(op)) {
    options.push({
      long: ALL_FLAG,
      key: 'all',
      group: REQUEST_OPTIONS,
      description:
        'every page, from the first to the last, printed as each arrives (a table row by row, json as one array written item by item); not with --page',
    });
  }
  if (isBinaryResponse(op)) {
    options.push({
      long: '--output',
      value: '<file>',
      key: 'output',
      group: REQUEST_OPTIONS,
      description: 'write the response bytes to a file ("-" for stdout)',
    });
  }
  return {
    description: longDescription(op),
    arguments: pathParameters(op).map((p) => ({
      name: argumentName(op, p),
      required: true,
      description: `${p.description}${p.type === 'string' ? '' : ` (${p.type})`}`,
    })),
    options,
    async run(input) {
      const { runOperation } = await import('../run-operation.js');
      await runOperation(op, input, bound, hooks);
    },
  };
}

function optionsFor(input: FlagInput, key: string): OptionSpec[] {
  const group = GROUP_HEADINGS[input.location];
  const requirement = input.required
    ? input.location === 'body'
      ? 'required, here or in --data'
      : 'required'
    : '';
  const description = annotate(input.description, input.type, requirement);
  if (input.type === 'boolean') {
    return [
      { long: input.flag, key, group, description },
      { long: negated(input.flag), key, group, description: `send ${input.name}=false`, flagValue: false },
    ];
  }
  return [
    {
      long: input.flag,
      value: `<${input.type}>`,
      key,
      group,
      description,
      parse: (raw, previous) => accumulate(input.type, raw, previous, input.nullable),
      ...(isEnumType(input.type) ? { values: enumValues(input.type) } : {}),
      // Query and header parameters have no --data to come from, so the parser enforces them.
      mandatory: input.required && input.location !== 'body',
    },
  ];
}

/** `owner|admin|member` and `a|b[]` → the values; null is no value to offer. */
function enumValues(type: string): string[] {
  return (isArrayType(type) ? itemType(type) : type).split('|').filter((v) => v !== 'null');
}

function annotate(description: string, type: string, requirement: string): string {
  const notes = [requirement, isArrayType(type) ? 'repeatable' : ''].filter(Boolean);
  if (notes.length === 0) return description;
  return `${description}${description ? ' ' : ''}(${notes.join('; ')})`;
}

export function longDescription(op: CliOperation): string {
  const auth = op.security.length === 0 ? 'no sign-in needed' : `sign-in: ${op.security.join(' or ')}`;
  const capability = op.capability ? `; API tokens need capability ${op.capability}` : '';
  return `${op.summary}\n\n  ${op.method.toUpperCase()} /api/v2${op.path}\n(${auth}${capability}; operation ${op.operationId})`;
}
