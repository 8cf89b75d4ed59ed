// The file layer (server/src/substrate/local/files) against a real volume directory beside a canary:
// its rules, and Wings' five symbolic-link vulnerabilities as regression tests. Each test ends by
// checking that nothing outside the volume was read, written, re-moded or deleted.
import { chmod, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLayerError, MAX_FILE_BYTES, VolumeFiles } from '../../server/src/substrate/local/files/index.js';
import { unwritten } from '../../server/src/substrate/local/files/streams.js';
import { makeSandbox, SECRET, type Sandbox } from './canary.js';

let box: Sandbox;
let files: VolumeFiles;

beforeEach(async () => {
  box = await makeSandbox();
  files = new VolumeFiles(box.volume);
});

afterEach(async () => {
  await box.intact();
  await box.cleanup();
});

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FileLayerError);
  return (err as FileLayerError).code;
}

describe('paths', () => {
  it('refuses .., NUL, relative paths and /proc, /sys, /dev', async () => {
    for (const path of ['/a/../b', '/..', 'a', '', '/a\0b', '/proc/self/environ', '/sys', '//dev/null']) {
      expect(await refusal(files.list(path))).toBe('invalid-path');
      expect(await refusal(files.read(path))).toBe('invalid-path');
      expect(await refusal(files.write(path, 'x'))).toBe('invalid-path');
    }
  });

  it('answers the normalised path', async () => {
    await files.mkdir('/a/b');
    expect((await files.list('//a/./b/')).path).toBe('/a/b');
    expect((await files.list('/')).path).toBe('/');
    // A directory named like a system prefix is fine below the root.
    expect((await files.mkdir('/a/proc')).path).toBe('/a/proc');
  });
});

describe('operations', () => {
  it('writes atomically, reads back, lists and stats', async () => {
    const written = await files.write('/dir/notes.txt', 'héllo');
    expect(written).toMatchObject({ kind: 'file', name: 'notes.txt', path: '/dir/notes.txt', size_bytes: 6 });
    expect(await files.read('/dir/notes.txt')).toEqual({
      path: '/dir/notes.txt',
      content: 'héllo',
      size_bytes: 6,
    });
    await files.write('/dir/notes.txt', 'second');
    expect((await files.read('/dir/notes.txt')).content).toBe('second');
    const listing = await files.list('/dir');
    // No temporary file is left behind.
    expect(listing).toMatchObject({ path: '/dir', truncated: false });
    expect(listing.entries.map((e) => e.name)).toEqual(['notes.txt']);
    expect(await files.stat('/dir')).toMatchObject({ kind: 'directory', size_bytes: null, path: '/dir' });
  });

  it('keeps the mode of a replaced file', async () => {
    await files.write('/run.sh', '#!/bin/sh');
    await chmod(join(box.volume, 'run.sh'), 0o750);
    await files.write('/run.sh', '#!/bin/sh\necho');
    expect((await stat(join(box.volume, 'run.sh'))).mode & 0o777).toBe(0o750);
  });

  it('caps reads and writes at one mebibyte and reads only UTF-8', async () => {
    expect(await refusal(files.write('/big', 'x'.repeat(MAX_FILE_BYTES + 1)))).toBe('file-too-large');
    await expect(lstat(join(box.volume, 'big'))).rejects.toThrow(/ENOENT/);
    await files.write('/exact', 'x'.repeat(MAX_FILE_BYTES));
    expect((await files.read('/exact')).size_bytes).toBe(MAX_FILE_BYTES);
    await writeFile(join(box.volume, 'big'), Buffer.alloc(MAX_FILE_BYTES + 1, 0x61));
    expect(await refusal(files.read('/big'))).toBe('file-too-large');
    await writeFile(join(box.volume, 'bin'), Buffer.from([0x66, 0xff, 0xfe]));
    expect(await refusal(files.read('/bin'))).toBe('file-not-text');
  });

  it('makes parents, idempotently; a file in the way is not a directory', async () => {
    const made = await files.mkdir('/x/y/z');
    expect(made).toMatchObject({ kind: 'directory', name: 'z', path: '/x/y/z' });
    expect(await files.mkdir('/x/y/z')).toMatchObject({ path: '/x/y/z' });
    await files.write('/x/file', 'f');
    expect(await refusal(files.mkdir('/x/file/sub'))).toBe('not-a-directory');
    expect(await refusal(files.write('/x/file/sub.txt', 'f'))).toBe('not-a-directory');
    expect(await refusal(files.write('/x/y', 'f'))).toBe('is-a-directory');
    expect((await stat(join(box.volume, 'x', 'y'))).isDirectory()).toBe(true);
  });

  it('deletes files and directories; recursive for a non-empty one; never the root', async () => {
    await files.write('/d/e/f.txt', 'f');
    expect(await refusal(files.remove('/d'))).toBe('directory-not-empty');
    expect((await files.read('/d/e/f.txt')).content).toBe('f');
    await files.remove('/d/e/f.txt');
    await files.remove('/d/e');
    await files.write('/d/e/f.txt', 'f');
    await files.remove('/d', { recursive: true });
    await expect(lstat(join(box.volume, 'd'))).rejects.toThrow(/ENOENT/);
    expect(await refusal(files.remove('/d'))).toBe('not-found');
    expect(await refusal(files.remove('/'))).toBe('mount-root');
    expect(await refusal(files.remove('//./', { recursive: true }))).toBe('mount-root');
  });

  it('stops a listing at 1000 entries and says so', async () => {
    for (let i = 0; i < 1001; i++) await writeFile(join(box.volume, `f${i}`), '');
    const listing = await files.list('/');
    expect(listing.entries).toHaveLength(1000);
    expect(listing.truncated).toBe(true);
  });

  it('does not hang on a FIFO and does not list it', async () => {
    execFileSync('mkfifo', [join(box.volume, 'pipe')]);
    expect(await refusal(files.read('/pipe'))).toBe('not-found');
    expect((await files.list('/')).entries).toEqual([]);
  });

  it('renames within the volume and sets modes', async () => {
    await files.write('/a.txt', 'a');
    expect(await files.rename('/a.txt', '/sub/b.txt').catch((e: FileLayerError) => e.code)).toBe('not-found');
    await files.mkdir('/sub');
    await files.rename('/a.txt', '/sub/b.txt');
    expect(await files.stat('/sub/b.txt')).toMatchObject({ path: '/sub/b.txt', kind: 'file' });
    await files.chmod('/sub/b.txt', 0o4755);
    expect((await stat(join(box.volume, 'sub', 'b.txt'))).mode & 0o7777).toBe(0o755);
    expect(await refusal(files.rename('/', '/x'))).toBe('mount-root');
    // A file nobody may read can still be re-moded, as chmod(1) can.
    await files.write('/locked', 'x');
    await chmod(join(box.volume, 'locked'), 0);
    await files.chmod('/locked', 0o640);
    expect((await stat(join(box.volume, 'locked'))).mode & 0o7777).toBe(0o640);
  });
});

describe('pending files', () => {
  it('writes a body\'s chunks gathered, one after another from the position given', async () => {
    const pending = await files.streams.createPending('/up.bin');
    await pending.writeAt([Buffer.from('abc'), Buffer.alloc(0), Buffer.from('de')], 0);
    await pending.writeAt(Buffer.from('fg'), 5);
    await pending.writeAt([Buffer.from('h'), Buffer.from('ij')], 7);
    expect((await pending.commit()).size_bytes).toBe(10);
    expect(await readFile(join(box.volume, 'up.bin'), 'utf8')).toBe('abcdefghij');
  });

  it('goes on from where a short gathered write stopped', () => {
    const text = (buffers: Buffer[]) => Buffer.concat(buffers).toString();
    const chunks = () => [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fgh')];
    expect(text(unwritten(chunks(), 0))).toBe('abcdefgh');
    expect(text(unwritten(chunks(), 2))).toBe('cdefgh');
    expect(text(unwritten(chunks(), 3))).toBe('defgh');
    expect(unwritten(chunks(), 3)).toHaveLength(2);
    expect(text(unwritten(chunks(), 6))).toBe('gh');
    expect(unwritten(chunks(), 8)).toEqual([]);
  });
});

// Wings' advisories, each replayed against the file layer.
describe('symbolic links never lead out of the volume', () => {
  it('CVE-2023-25152: a write through a link to an outside file replaces the link, not the file', async () => {
    await symlink(box.outsideFile, join(box.volume, 'config.yml'));
    await files.write('/config.yml', 'overwritten');
    expect((await lstat(join(box.volume, 'config.yml'))).isFile()).toBe(true);
    expect(await readFile(join(box.volume, 'config.yml'), 'utf8')).toBe('overwritten');
    // And through a linked directory, the write is refused.
    await symlink(box.outside, join(box.volume, 'plugins'));
    expect(await refusal(files.write('/plugins/secret.txt', 'overwritten'))).toBe('not-a-directory');
    expect(await refusal(files.write('/plugins/new.txt', 'planted'))).toBe('not-a-directory');
    expect(await refusal(files.mkdir('/plugins/newdir'))).toBe('not-a-directory');
  });

  it('CVE-2023-25168: reads, lists and stats through links to outside read as absent', async () => {
    await symlink(box.outsideFile, join(box.volume, 'link.txt'));
    await symlink(box.outside, join(box.volume, 'linkdir'));
    await symlink('../outside.txt', join(box.volume, 'relative.txt'));
    await mkdir(join(box.volume, 'a'));
    await symlink('../../outside', join(box.volume, 'a', 'up'));
    for (const path of [
      '/link.txt',
      '/linkdir/secret.txt',
      '/relative.txt',
      '/a/up/secret.txt',
      '/linkdir/sub/deep.txt',
    ]) {
      expect(await refusal(files.read(path))).toBe('not-found');
      expect(await refusal(files.stat(path))).toBe('not-found');
    }
    expect(await refusal(files.list('/linkdir'))).toBe('not-found');
    expect(await refusal(files.list('/a/up/sub'))).toBe('not-found');
    // Links are not listed at all, so no entry reveals an outside size or time.
    expect((await files.list('/')).entries.map((e) => e.name)).toEqual(['a']);
  });

  it('CVE-2024-27102: a link to a link, and a link inside the volume, are not followed either', async () => {
    await writeFile(join(box.volume, 'real.txt'), 'inside');
    await symlink(box.outsideFile, join(box.volume, 'hop1'));
    await symlink('hop1', join(box.volume, 'hop2'));
    await symlink('real.txt', join(box.volume, 'inner'));
    expect(await refusal(files.read('/hop2'))).toBe('not-found');
    expect(await refusal(files.read('/inner'))).toBe('not-found');
    await files.rename('/hop2', '/moved');
    expect(await readlink(join(box.volume, 'moved'))).toBe('hop1');
    expect(await refusal(files.rename('/linkdir-missing/x', '/y'))).toBe('not-found');
    await symlink(box.outside, join(box.volume, 'out'));
    expect(await refusal(files.rename('/out/secret.txt', '/stolen.txt'))).toBe('not-found');
    expect(await refusal(files.rename('/real.txt', '/out/planted.txt'))).toBe('not-found');
  });

  it('a link inside the volume on the way to a deeper entry is not followed, whatever the depth', async () => {
    await mkdir(join(box.volume, 'real', 'b', 'c'), { recursive: true });
    await writeFile(join(box.volume, 'real', 'b', 'c', 'f.txt'), 'inside');
    await symlink('real', join(box.volume, 'alias'));
    await symlink('c', join(box.volume, 'real', 'b', 'hop'));
    await symlink(join(box.volume, 'real'), join(box.volume, 'absolute'));
    for (const path of ['/alias/b/c/f.txt', '/real/b/hop/f.txt', '/absolute/b/c/f.txt']) {
      expect(await refusal(files.read(path))).toBe('not-found');
      expect(await refusal(files.stat(path))).toBe('not-found');
      // A write makes missing directories, so a link in the way is something other than a directory.
      expect(await refusal(files.write(path, 'through a link'))).toBe('not-a-directory');
    }
    expect(await refusal(files.list('/alias/b/c'))).toBe('not-found');
    expect(await refusal(files.handles().stat('/alias/b/c/f.txt'))).toBe('not-found');
    expect(await refusal(files.streams.openRead('/real/b/hop/f.txt'))).toBe('not-found');
    // The same entries by their own path answer as always.
    expect((await files.read('/real/b/c/f.txt')).content).toBe('inside');
    expect((await files.handles().stat('/real/b/c/f.txt')).size).toBe(6);
    expect((await files.list('/real/b/c')).entries.map((e) => e.name)).toEqual(['f.txt']);
  });

  it('GHSA-rhq6-9rgh-v45c: chmod through a link changes nothing outside', async () => {
    await symlink(box.outsideFile, join(box.volume, 'server.jar'));
    await symlink(box.outside, join(box.volume, 'dir'));
    expect(await refusal(files.chmod('/server.jar', 0o777))).toBe('not-found');
    expect(await refusal(files.chmod('/dir/secret.txt', 0o777))).toBe('not-found');
    expect(await refusal(files.chmod('/dir', 0o777))).toBe('not-found');
  });

  it('the recursive delete removes links themselves, never what they point at', async () => {
    await mkdir(join(box.volume, 'world', 'region'), { recursive: true });
    await writeFile(join(box.volume, 'world', 'region', 'r.0.0.mca'), 'data');
    await symlink(box.outside, join(box.volume, 'world', 'region', 'escape'));
    await symlink(box.outsideFile, join(box.volume, 'world', 'file-escape'));
    await files.remove('/world', { recursive: true });
    await expect(lstat(join(box.volume, 'world'))).rejects.toThrow(/ENOENT/);
    // A link named directly is removed as a link, recursive or not.
    await symlink(box.outside, join(box.volume, 'logs'));
    await files.remove('/logs', { recursive: true });
    await expect(lstat(join(box.volume, 'logs'))).rejects.toThrow(/ENOENT/);
    await symlink(box.outside, join(box.volume, 'logs'));
    expect(await refusal(files.remove('/logs/secret.txt'))).toBe('not-found');
    expect(await refusal(files.remove('/logs/sub', { recursive: true }))).toBe('not-found');
    expect(await readFile(join(box.outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });
});
