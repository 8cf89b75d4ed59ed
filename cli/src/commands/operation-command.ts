// One generated command per operation of the index. Only the definition lives here; the action
// (SDK, config, output) is imported when the command runs, keeping `--help` fast.
import { Argument, InvalidArgumentError, Option, type Command } from '../commander.js';
import { accumulate, CoercionError, isArrayType } from '../coerce.js';
import { addGlobalOptions } from '../global-options.js';
import { isBinaryResponse, pathParameters, type CliOperation } from '../operation.js';
import { flagInputs, negated, type FlagInput } from '../operation-inputs.js';

const GROUP_HEADINGS = {
  query: 'Query parameters:',
  header: 'Header parameters:',
  body: 'Body fields:',
} as const;

export interface BoundInput {
  input: FlagInput;
  /** commander's attribute name for the flag's value. */
  key: string;
}

export function defineOperationCommand(cmd: Command, op: CliOperation): void {
  cmd.description(longDescription(op)).summary(op.summary);
  for (const p of pathParameters(op)) {
    const typeNote = p.type === 'string' ? '' : ` (${p.type})`;
    cmd.addArgument(new Argument(`<${p.name}>`, `${p.description}${typeNote}`));
  }
  const bound: BoundInput[] = [];
  const taken = new Set<string>(['-h', '--help']);
  for (const input of flagInputs(op)) {
    const option = optionFor(input);
    cmd.addOption(option);
    taken.add(input.flag);
    if (input.type === 'boolean') {
      cmd.addOption(
        new Option(negated(input.flag), `send ${input.name}=false`).helpGroup(GROUP_HEADINGS[input.location]),
      );
      taken.add(negated(input.flag));
    }
    bound.push({ input, key: option.attributeName() });
  }
  if (op.body) {
    cmd.addOption(
      new Option(
        '--data <json>',
        'the request body as JSON: inline, @file.json (or .yaml) or @- for stdin; flags above override its fields',
      ).helpGroup('Request options:'),
    );
    taken.add('--data');
  }
  if (isBinaryResponse(op)) {
    cmd.addOption(
      new Option('--output <file>', 'write the response bytes to a file ("-" for stdout)').helpGroup(
        'Request options:',
      ),
    );
    taken.add('--output');
  }
  addGlobalOptions(cmd, taken);
  cmd.action(async (...args: unknown[]) => {
    const positionals = args.slice(0, -2) as string[];
    const { runOperation } = await import('../run-operation.js');
    await runOperation(op, cmd, positionals, bound);
  });
}

function optionFor(input: FlagInput): Option {
  const heading = GROUP_HEADINGS[input.location];
  const requirement = input.required
    ? input.location === 'body'
      ? 'required, here or in --data'
      : 'required'
    : '';
  if (input.type === 'boolean') {
    const option = new Option(input.flag, annotate(input.description, input.type, requirement));
    return option.helpGroup(heading);
  }
  const option = new Option(
    `${input.flag} <${input.type}>`,
    annotate(input.description, input.type, requirement),
  )
    .helpGroup(heading)
    .argParser((raw: string, previous: unknown) => {
      try {
        return accumulate(input.type, raw, previous, input.nullable);
      } catch (err) {
        if (err instanceof CoercionError) throw new InvalidArgumentError(err.message);
        throw err;
      }
    });
  // Query and header parameters have no --data to come from, so commander enforces them.
  if (input.required && input.location !== 'body') option.makeOptionMandatory();
  return option;
}

function annotate(description: string, type: string, requirement: string): string {
  const notes = [requirement, isArrayType(type) ? 'repeatable' : ''].filter(Boolean);
  if (notes.length === 0) return description;
  return `${description}${description ? ' ' : ''}(${notes.join('; ')})`;
}

function longDescription(op: CliOperation): string {
  const auth = op.security.length === 0 ? 'no sign-in needed' : `sign-in: ${op.security.join(' or ')}`;
  const capability = op.capability ? `; API tokens need capability ${op.capability}` : '';
  return `${op.summary}\n\n${op.method.toUpperCase()} /api/v2${op.path} (${auth}${capability}; operation ${op.operationId})`;
}
