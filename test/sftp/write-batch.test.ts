// The SFTP session's write batching (server/src/gateway/sftp/write-batch.ts): requests queued while a
// write runs are joined only where their offsets follow on, land in the order they came, and each is
// answered with the fate of the write that carried it.
import { describe, expect, it } from 'vitest';
import { WriteBatcher } from '../../server/src/gateway/sftp/write-batch.js';

interface Call {
  offset: number;
  data: string;
}

function recorder(fail?: (call: Call) => boolean) {
  const calls: Call[] = [];
  const file = Buffer.alloc(64, '.');
  const batcher = new WriteBatcher(async (data, offset) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const call = { offset, data: data.toString() };
    calls.push(call);
    if (fail?.(call)) throw new Error(`failed at ${offset}`);
    data.copy(file, offset);
  });
  return { calls, file, batcher };
}

const settle = (p: Promise<void>) =>
  p.then(
    () => 'ok',
    (err: Error) => err.message,
  );

describe('WriteBatcher', () => {
  it('joins requests whose offsets follow on into one write, and not others', async () => {
    const { calls, file, batcher } = recorder();
    const done = [
      batcher.add(0, Buffer.from('aa')),
      batcher.add(2, Buffer.from('bb')),
      batcher.add(4, Buffer.from('cc')),
      batcher.add(10, Buffer.from('dd')),
      batcher.add(12, Buffer.from('ee')),
    ];
    await Promise.all(done);
    expect(calls).toEqual([
      { offset: 0, data: 'aabbcc' },
      { offset: 10, data: 'ddee' },
    ]);
    expect(file.subarray(0, 14).toString()).toBe('aabbcc....ddee');
  });

  it('writes overlapping requests in the order they came', async () => {
    const { file, batcher } = recorder();
    await Promise.all([
      batcher.add(0, Buffer.from('xxxx')),
      batcher.add(2, Buffer.from('yy')),
      batcher.add(0, Buffer.from('z')),
    ]);
    expect(file.subarray(0, 4).toString()).toBe('zxyy');
  });

  it('joins what arrives while a write runs, answering each only once its bytes are written', async () => {
    const { calls, batcher } = recorder();
    const first = batcher.add(0, Buffer.from('a'));
    await new Promise((resolve) => setTimeout(resolve, 1));
    let secondDone = false;
    const second = batcher.add(1, Buffer.from('b')).then(() => (secondDone = true));
    const third = batcher.add(2, Buffer.from('c'));
    await first;
    expect(secondDone).toBe(false);
    await Promise.all([second, third]);
    expect(calls).toEqual([
      { offset: 0, data: 'a' },
      { offset: 1, data: 'bc' },
    ]);
  });

  it('fails every request a failed write carried, and only those', async () => {
    const { calls, batcher } = recorder((call) => call.offset === 4);
    const first = settle(batcher.add(0, Buffer.from('aaaa')));
    await new Promise((resolve) => setTimeout(resolve, 1));
    const results = await Promise.all([
      first,
      settle(batcher.add(4, Buffer.from('bb'))),
      settle(batcher.add(6, Buffer.from('cc'))),
      settle(batcher.add(20, Buffer.from('dd'))),
    ]);
    expect(calls.map((c) => c.data)).toEqual(['aaaa', 'bbcc', 'dd']);
    expect(results).toEqual(['ok', 'failed at 4', 'failed at 4', 'ok']);
  });

  it('idle() waits for queued writes', async () => {
    const { calls, batcher } = recorder();
    void batcher.add(0, Buffer.from('a'));
    void batcher.add(5, Buffer.from('b'));
    await batcher.idle();
    expect(calls).toHaveLength(2);
  });
});
