// One change at a time per key (a unit) in this process: two jobs starting the same unit make one agent,
// or one instance. Each call runs after the previous call for its key has settled, whatever its outcome.
export type Serial = <T>(key: string, work: () => Promise<T>) => Promise<T>;

export function serialPerKey(): Serial {
  const queues = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const next = (queues.get(key) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => undefined);
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  };
}
