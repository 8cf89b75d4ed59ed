// Splits the operation index over test files that parallel workers share, keeping each spec tag (an
// area: sudo, sessions, backups...) whole in one shard, so operations that change an area's state (an
// exit from sudo, then a re-elevation) still run in the order the whole run had.
import { operations } from '../../generated/operations.js';

type Entry = (typeof operations)[keyof typeof operations];

const tagOf = (op: Entry): string => op.tags[0] ?? '';

/** The tags of shard `shard` of `shards`: the largest tags first, each to the lightest shard so far. */
function tagsOfShard(shard: number, shards: number): Set<string> {
  const counts = new Map<string, number>();
  for (const op of Object.values(operations)) counts.set(tagOf(op), (counts.get(tagOf(op)) ?? 0) + 1);
  const load = Array.from({ length: shards }, () => 0);
  const mine = new Set<string>();
  for (const [tag, count] of [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    const lightest = load.indexOf(Math.min(...load));
    load[lightest]! += count;
    if (lightest === shard) mine.add(tag);
  }
  return mine;
}

/** Whether `op` runs in shard `shard` of `shards`. */
export function inShard(shard: number, shards: number): (op: { operationId: string }) => boolean {
  const tags = tagsOfShard(shard, shards);
  return (op) => {
    const entry = (operations as Record<string, Entry>)[op.operationId];
    if (!entry) throw new Error(`${op.operationId} is not in the operation index`);
    return tags.has(tagOf(entry));
  };
}
