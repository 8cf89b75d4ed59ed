// Reads of a session's open files, a block ahead. A client keeps many READs outstanding (OpenSSH 64 of
// 32 KiB, in order); answered one read each, a 64 MiB download was 2048 trips to libuv's thread pool,
// and each trip gave the CPU away (the SFTP bench's profile of a download: the reads' hand-off to the
// pool next only to the cipher). A READ that follows on from the last one on its handle (or starts the
// file) reads BLOCK_BYTES at once, and the READs it covers are answered from that block.
//
// What a block holds is the file as it was when read: a block older than MAX_AGE_MS is read again, as
// is a READ at or past the end a block met (the file may have grown since); any change the session
// makes drops them all (clear). A read-ahead that fails is retried as the READ alone, so a bad spot
// further on fails only the READ that asks for it. Blocks are counted per session (MAX_BLOCKS), so a
// client opening many handles holds no more than that; past it, READs go to the file one by one.
import type { VolumeFileHandle } from '../../substrate/volume-access.js';

const BLOCK_BYTES = 512 * 1024;
const BLOCKS_PER_HANDLE = 2;
const MAX_BLOCKS = 16;
const MAX_AGE_MS = 1_000;

interface Block {
  offset: number;
  at: number;
  data: Promise<Buffer | null>;
}

interface State {
  blocks: Block[];
  /** Where the last READ on the handle ended: one starting here is sequential. */
  next: number;
}

export class ReadAhead {
  private readonly handles = new Map<object, State>();
  private held = 0;

  /**
   * Up to `length` bytes of `file` at `offset` (fewer at its end, none past it). `key` names the open
   * handle; `now` is the time in milliseconds.
   */
  async read(
    key: object,
    file: VolumeFileHandle,
    offset: number,
    length: number,
    now = Date.now(),
  ): Promise<Buffer> {
    let state = this.handles.get(key);
    if (!state) this.handles.set(key, (state = { blocks: [], next: 0 }));
    const sequential = offset === 0 || offset === state.next;
    state.next = offset + length;
    for (const block of state.blocks) {
      if (now - block.at > MAX_AGE_MS) continue;
      if (offset < block.offset || offset + length > block.offset + BLOCK_BYTES) continue;
      const data = await block.data;
      const start = offset - block.offset;
      if (data && start < data.length) return data.subarray(start, Math.min(data.length, start + length));
      // At or past the end the block met: the file as it is now, without reading ahead of its end.
      if (data) return readOnce(file, offset, length);
    }
    if (!sequential || length >= BLOCK_BYTES || !this.room(state)) return readOnce(file, offset, length);
    const block: Block = { offset, at: now, data: readOnce(file, offset, BLOCK_BYTES).catch(() => null) };
    state.blocks.push(block);
    const data = await block.data;
    if (!data) return readOnce(file, offset, length);
    return data.subarray(0, Math.min(data.length, length));
  }

  /** The handle closed: its blocks go. */
  forget(key: object): void {
    const state = this.handles.get(key);
    if (!state) return;
    this.held -= state.blocks.length;
    this.handles.delete(key);
  }

  /** The session changed something: no block may answer for what it was before. */
  clear(): void {
    for (const state of this.handles.values()) state.blocks = [];
    this.held = 0;
  }

  /** Makes room for one more block of `state`: its oldest, or one of the session's MAX_BLOCKS. */
  private room(state: State): boolean {
    if (state.blocks.length >= BLOCKS_PER_HANDLE) {
      state.blocks.shift();
      return true;
    }
    if (this.held >= MAX_BLOCKS) return false;
    this.held++;
    return true;
  }
}

async function readOnce(file: VolumeFileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await file.read(buffer, 0, length, offset);
  return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
}
