// The command words of every operation folded into a tree: `public incidents list` is the path
// public → incidents → list; and that tree as the commands the argv parser walks.
import type { CommandSpec } from './argv/spec.js';
import type { OperationOverride } from './commands/operation-overrides.js';
import { argumentName, pathParameters, type CliOperation } from './operation.js';

/** Commands that are not operations; an operation whose first word is one of these is unreachable. */
export const BUILTIN_COMMANDS = [
  'api',
  'completion',
  'config',
  'help',
  'login',
  'logout',
  'session',
  'sessions',
  'password',
  'signup',
  'whoami',
] as const;

export interface CommandNode {
  readonly word: string;
  readonly children: Map<string, CommandNode>;
  operation?: CliOperation;
}

export interface TreeConflict {
  words: string;
  operationIds: string[];
}

export function buildCommandTree(operations: Iterable<CliOperation>): {
  root: CommandNode;
  conflicts: TreeConflict[];
} {
  const root: CommandNode = { word: '', children: new Map() };
  const conflicts: TreeConflict[] = [];
  for (const op of operations) {
    let node = root;
    for (const word of op.cli) {
      let child = node.children.get(word);
      if (!child) {
        child = { word, children: new Map() };
        node.children.set(word, child);
      }
      node = child;
    }
    // The first operation keeps the words; the conflict is reported (and tested) rather than
    // silently shadowing an operation at run time.
    if (node.operation)
      conflicts.push({ words: op.cli.join(' '), operationIds: [node.operation.operationId, op.operationId] });
    else node.operation = op;
  }
  return { root, conflicts };
}

/** Number of operations at or below a node. */
export function countOperations(node: CommandNode): number {
  let n = node.operation ? 1 : 0;
  for (const child of node.children.values()) n += countOperations(child);
  return n;
}

/** A one-line description of a group: its sub-words, so `svcctl --help` hints at what is inside. */
export function describeGroup(node: CommandNode, width = 60, overrides: OperationOverrides = {}): string {
  if (node.operation && node.children.size === 0) return node.operation.summary;
  const words = [
    ...[...node.children.values()].filter((c) => !isHidden(c, overrides)).map((c) => c.word),
    ...besideCommands(node, overrides).map((c) => c.name),
  ];
  let text = '';
  for (const [i, word] of words.entries()) {
    const next = text ? `${text}, ${word}` : word;
    if (next.length > width) return `${text}, … (${words.length - i} more)`;
    text = next;
  }
  return text;
}

export type OperationOverrides = Readonly<Record<string, OperationOverride>>;

/** A node whose operation's override hides it, with nothing visible below it. */
function isHidden(node: CommandNode, overrides: OperationOverrides): boolean {
  const op = node.operation;
  const hidden =
    op !== undefined && Object.hasOwn(overrides, op.operationId) && overrides[op.operationId]!.hidden;
  return hidden === true && [...node.children.values()].every((c) => isHidden(c, overrides));
}

// The tree as commands: groups list their words; a node with an operation becomes runnable, its
// options built (commands/operation-command.ts) only when the command line reaches it, or by its
// override (commands/operation-overrides.ts), keyed by operationId, when it has one.
export function treeCommands(
  root: CommandNode,
  listGroup: string,
  overrides: OperationOverrides = {},
): CommandSpec[] {
  return [...root.children.values()].map((node) => commandFor(node, overrides, listGroup));
}

function commandFor(node: CommandNode, overrides: OperationOverrides, listGroup?: string): CommandSpec {
  const op = node.operation;
  const custom = op && Object.hasOwn(overrides, op.operationId) ? overrides[op.operationId] : undefined;
  return {
    name: node.word,
    summary: describeGroup(node, 60, overrides),
    term: termFor(node, custom),
    ...(listGroup ? { listGroup } : {}),
    ...(isHidden(node, overrides) ? { hidden: true } : {}),
    description: `${node.word}: ${describeGroup(node, Infinity, overrides)}`,
    subcommands: () => [
      ...[...node.children.values()].map((child) => commandFor(child, overrides)),
      ...besideCommands(node, overrides),
    ],
    ...(op
      ? {
          runnable: async () => {
            if (custom) return custom.runnable(op);
            const { operationRunnable } = await import('./commands/operation-command.js');
            return operationRunnable(op);
          },
        }
      : {}),
  };
}

/**
 * The commands overrides put beside the operations under `node` (`operations wait` beside the generated
 * `operations show`): not operations of the spec, so they live in the tree as their operation's
 * companions. A word the spec gives an operation stays that operation's.
 */
function besideCommands(node: CommandNode, overrides: OperationOverrides): CommandSpec[] {
  const commands: CommandSpec[] = [];
  for (const child of node.children.values()) {
    const op = child.operation;
    if (!op || !Object.hasOwn(overrides, op.operationId)) continue;
    for (const [word, extra] of Object.entries(overrides[op.operationId]!.beside ?? {})) {
      if (node.children.has(word)) continue;
      commands.push({
        name: word,
        summary: extra.summary,
        term: extra.term(word),
        description: `${word}: ${extra.summary}`,
        subcommands: () => [],
        runnable: () => extra.runnable(op),
      });
    }
  }
  return commands;
}

function termFor(node: CommandNode, custom?: OperationOverride): string {
  const op = node.operation;
  if (!op) return `${node.word} <command>`;
  if (custom?.term) return `${custom.term(node.word)}${node.children.size > 0 ? ' [command]' : ''}`;
  const hasOptions = op.parameters.some((p) => p.in !== 'path') || op.body !== null;
  const args = pathParameters(op)
    .map((p) => ` <${argumentName(op, p)}>`)
    .join('');
  return `${node.word}${hasOptions ? ' [options]' : ''}${args}${node.children.size > 0 ? ' [command]' : ''}`;
}
