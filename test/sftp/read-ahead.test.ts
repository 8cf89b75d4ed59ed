// The SFTP session's read-ahead (server/src/gateway/sftp/read-ahead.ts): sequential READs are answered
// from blocks read once, and never from a block that may no longer hold the file as it is.
import { describe, expect, it } from 'vitest';
import { ReadAhead } from '../../server/src/gateway/sftp/read-ahead.js';
import type { VolumeFileHandle } from '../../server/src/substrate/volume-access.js';

const KIB = 1024;

/** A file in memory that counts its reads; `failAt` makes a read covering that byte fail. */
function memoryFile(content: Buffer, failAt?: number) {
  const file = {
    content,
    reads: [] as { position: number; length: number }[],
    read(buffer: Buffer, offset: number, length: number, position: number) {
      file.reads.push({ position, length });
      if (failAt !== undefined && position <= failAt && failAt < position + length)
        return Promise.reject(Object.assign(new Error('EIO'), { code: 'EIO' }));
      const bytesRead = Math.max(0, Math.min(length, file.content.length - position));
      if (bytesRead > 0) file.content.copy(buffer, offset, position, position + bytesRead);
      return Promise.resolve({ bytesRead });
    },
  };
  return file as typeof file & VolumeFileHandle;
}

function pattern(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = (i * 7 + (i >> 10)) & 0xff;
  return out;
}

async function download(ahead: ReadAhead, key: object, file: VolumeFileHandle, chunk: number, now = 0) {
  const parts: Buffer[] = [];
  for (let offset = 0; ; offset += chunk) {
    // As OpenSSH: many READs outstanding at once, answered in any order.
    const batch = await Promise.all(
      Array.from({ length: 16 }, (_, i) => ahead.read(key, file, offset + i * chunk, chunk, now)),
    );
    offset += 15 * chunk;
    for (const part of batch) parts.push(part);
    if (batch.some((part) => part.length < chunk)) break;
  }
  return Buffer.concat(parts);
}

describe('ReadAhead', () => {
  it('answers a sequential download byte for byte from a few large reads', async () => {
    const content = pattern(2 * 1024 * KIB + 123);
    const file = memoryFile(content);
    const got = await download(new ReadAhead(), {}, file, 32 * KIB);
    expect(got.equals(content)).toBe(true);
    // 2 MiB in 32 KiB READs would be 65 reads within the file one by one; READs past its end are each
    // read again (the file may have grown), as before.
    expect(file.reads.filter((r) => r.position < content.length).length).toBeLessThanOrEqual(5);
  });

  it('reads only what is asked for a READ that does not follow on', async () => {
    const file = memoryFile(pattern(4 * 1024 * KIB));
    const ahead = new ReadAhead();
    const key = {};
    await ahead.read(key, file, 3 * 1024 * KIB, 4 * KIB);
    await ahead.read(key, file, 1024 * KIB, 4 * KIB);
    expect(file.reads).toEqual([
      { position: 3 * 1024 * KIB, length: 4 * KIB },
      { position: 1024 * KIB, length: 4 * KIB },
    ]);
  });

  it('reads again past the end a block met, and once a block is old, and after clear()', async () => {
    const file = memoryFile(Buffer.from('first'));
    const ahead = new ReadAhead();
    const key = {};
    expect((await ahead.read(key, file, 0, 32 * KIB, 0)).toString()).toBe('first');
    // The file grew: a READ at the old end sees what was added.
    file.content = Buffer.from('first+more');
    expect((await ahead.read(key, file, 5, 32 * KIB, 10)).toString()).toBe('+more');
    // Rewritten: a fresh block still answers as it was...
    file.content = Buffer.from('FIRST+MORE');
    expect((await ahead.read(key, file, 0, 5, 20)).toString()).toBe('first');
    // ...but not once older than a second, nor after the session changed something.
    expect((await ahead.read(key, file, 0, 5, 2_000)).toString()).toBe('FIRST');
    file.content = Buffer.from('third-----');
    ahead.clear();
    expect((await ahead.read(key, file, 0, 5, 2_001)).toString()).toBe('third');
  });

  it('fails only the READ that covers a bad spot, not those before it in the same block', async () => {
    const content = pattern(1024 * KIB);
    const file = memoryFile(content, 300 * KIB);
    const ahead = new ReadAhead();
    const key = {};
    expect((await ahead.read(key, file, 0, 32 * KIB)).equals(content.subarray(0, 32 * KIB))).toBe(true);
    await expect(ahead.read(key, file, 288 * KIB, 32 * KIB)).rejects.toThrow('EIO');
  });

  it('holds at most 16 blocks a session: further handles read one READ at a time', async () => {
    const ahead = new ReadAhead();
    const files = Array.from({ length: 20 }, () => memoryFile(pattern(256 * KIB)));
    for (const file of files) await ahead.read(file, file, 0, 32 * KIB);
    expect(files.map((f) => f.reads[0]!.length)).toEqual([
      ...Array<number>(16).fill(512 * KIB),
      ...Array<number>(4).fill(32 * KIB),
    ]);
    // A closed handle gives its block back.
    ahead.forget(files[0]!);
    const late = memoryFile(pattern(KIB));
    await ahead.read(late, late, 0, 32 * KIB);
    expect(late.reads[0]!.length).toBe(512 * KIB);
  });
});
