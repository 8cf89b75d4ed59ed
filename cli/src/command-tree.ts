// The command words of every operation folded into a tree: `public incidents list` is the path
// public → incidents → list. svcctl walks it to build only the commander commands that the given
// argv can reach, so start-up does not grow with the number of operations.
import type { CliOperation } from './operation.js';

/** Commands that are not operations; an operation whose first word is one of these is unreachable. */
export const BUILTIN_COMMANDS = ['api', 'config', 'help'] as const;

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
export function describeGroup(node: CommandNode, width = 60): string {
  if (node.operation && node.children.size === 0) return node.operation.summary;
  const words = [...node.children.keys()];
  let text = '';
  for (const [i, word] of words.entries()) {
    const next = text ? `${text}, ${word}` : word;
    if (next.length > width) return `${text}, … (${words.length - i} more)`;
    text = next;
  }
  return text;
}

/**
 * The command words of argv: the leading non-option arguments that walk the tree. Options may be
 * interleaved (`--profile prod public incidents list`), so options known to take a value skip it.
 */
export function commandWords(
  argv: readonly string[],
  root: CommandNode,
  optionsWithValue: ReadonlySet<string>,
): string[] {
  const words: string[] = [];
  let node: CommandNode | undefined = root;
  for (let i = 0; i < argv.length && node; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-') && arg.length > 1) {
      if (!arg.includes('=') && optionsWithValue.has(arg)) i += 1;
      continue;
    }
    const child: CommandNode | undefined = node.children.get(arg);
    if (!child) break;
    words.push(arg);
    node = child;
  }
  return words;
}
