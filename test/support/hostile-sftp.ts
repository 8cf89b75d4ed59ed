// A hostile SFTP peer for the import tests (DECISIONS.md §8 "Imports against hostile servers"), ssh2's
// Server speaking just enough SFTP to misbehave in one way each:
// - `endless-listing`: `/` answers every READDIR with another batch of names, never EOF (up to `cap`
//   names, 250,000 by default, far past the 100,000 an import reads, so that code without the limit ends
//   rather than exhausting the machine running the test);
// - `bottomless`: every directory holds one more directory, `d` (up to `cap` levels, 200 by default);
// - `silent-listing`: `/` answers its first READDIR with a few names, then never answers again;
// - `stalled-transfer`: `/` holds one 16 MiB file whose first few reads are answered, then none;
// - `silent-connect`: a TCP port that accepts and never says anything (not even SSH's banner);
// - `silent-auth`: SSH's handshake completes, the password is never answered.
// `silent` resolves when the peer first leaves a request unanswered; `sessions` counts the SFTP sessions
// opened (a restart test checks a finished import never connects again).
import { randomBytes } from 'node:crypto';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import ssh2 from 'ssh2';
import { ed25519KeyPair } from '../../server/src/ssh/ed25519.js';

const { Server, utils } = ssh2;
const { STATUS_CODE } = utils.sftp;

export type HostileMode =
  | 'endless-listing'
  | 'bottomless'
  | 'silent-listing'
  | 'stalled-transfer'
  | 'silent-connect'
  | 'silent-auth';

export interface HostileSftp {
  port: number;
  username: string;
  password: string;
  /** Resolves once a request was left unanswered (the silent and stalled modes). */
  silent: Promise<void>;
  sessions: number;
  /** Names sent in listings so far. */
  namesSent: number;
  /** Deepest directory listed (bottomless). */
  deepest: number;
  close(): Promise<void>;
}

const DIR = 0o040755;
const FILE = 0o100644;
const BIG = 16 * 1024 * 1024;
const attrs = (mode: number, size = 0) => ({ mode, uid: 0, gid: 0, size, atime: 1_600_000_000, mtime: 1_600_000_000 });

export async function startHostileSftp(mode: HostileMode, options: { cap?: number } = {}): Promise<HostileSftp> {
  const username = 'victim';
  const password = randomBytes(12).toString('base64url');
  let markSilent!: () => void;
  const silent = new Promise<void>((resolve) => (markSilent = resolve));
  const sockets = new Set<Socket>();
  const state: HostileSftp = {
    port: 0,
    username,
    password,
    silent,
    sessions: 0,
    namesSent: 0,
    deepest: 0,
    close: async () => undefined,
  };

  let server: NetServer | InstanceType<typeof Server>;
  if (mode === 'silent-connect') {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      markSilent();
    });
  } else {
    const hostKey = ed25519KeyPair().private;
    server = new Server({ hostKeys: [hostKey] }, (client) => {
      client.on('error', () => undefined);
      client.on('authentication', (ctx) => {
        if (mode === 'silent-auth') return markSilent();
        if (ctx.method === 'password' && ctx.username === username && ctx.password === password) ctx.accept();
        else ctx.reject(['password']);
      });
      client.on('ready', () => {
        client.on('session', (accept) => {
          accept().on('sftp', (acceptSftp) => {
            state.sessions += 1;
            serve(acceptSftp(), mode, options.cap, state, markSilent);
          });
        });
      });
    });
    (server as InstanceType<typeof Server>).on('connection', () => undefined);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as { port: number }).port;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

function serve(
  sftp: ssh2.SFTPWrapper,
  mode: HostileMode,
  cap: number | undefined,
  state: HostileSftp,
  markSilent: () => void,
): void {
  sftp.on('error', () => undefined);
  const dirs = new Map<number, { path: string; reads: number }>();
  let next = 1;
  const handle = () => {
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(next);
    return { id: next++, buf };
  };
  const idOf = (buf: Buffer) => (buf.length === 4 ? buf.readUInt32BE(0) : -1);
  const depthOf = (path: string) => path.split('/').filter(Boolean).length;

  sftp.on('REALPATH', (id, path) => {
    const p = `/${path.split('/').filter((x) => x && x !== '.').join('/')}`;
    sftp.name(id, [{ filename: p, longname: p, attrs: attrs(DIR) as never }]);
  });
  const stat = (id: number, path: string) =>
    path === '/big.bin' ? sftp.attrs(id, attrs(FILE, BIG)) : sftp.attrs(id, attrs(DIR));
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);
  sftp.on('OPENDIR', (id, path) => {
    const h = handle();
    dirs.set(h.id, { path, reads: 0 });
    sftp.handle(id, h.buf);
  });
  sftp.on('READDIR', (id, buf) => {
    const dir = dirs.get(idOf(buf));
    if (!dir) return sftp.status(id, STATUS_CODE.FAILURE);
    dir.reads += 1;
    if (mode === 'endless-listing') {
      const limit = cap ?? 250_000;
      if (state.namesSent >= limit) return sftp.status(id, STATUS_CODE.EOF);
      const names = [];
      for (let i = 0; i < 200; i++, state.namesSent++) {
        const filename = `e${String(state.namesSent).padStart(7, '0')}`;
        names.push({ filename, longname: filename, attrs: attrs(FILE, 1) as never });
      }
      return sftp.name(id, names);
    }
    if (mode === 'bottomless') {
      const depth = depthOf(dir.path);
      state.deepest = Math.max(state.deepest, depth);
      if (dir.reads > 1 || depth >= (cap ?? 200)) return sftp.status(id, STATUS_CODE.EOF);
      state.namesSent += 1;
      return sftp.name(id, [{ filename: 'd', longname: 'd', attrs: attrs(DIR) as never }]);
    }
    if (mode === 'silent-listing') {
      if (dir.reads > 1) return markSilent();
      const names = Array.from({ length: 10 }, (_, i) => ({ filename: `f${i}`, longname: `f${i}`, attrs: attrs(FILE, 1) as never }));
      state.namesSent += names.length;
      return sftp.name(id, names);
    }
    // stalled-transfer: one big file.
    if (dir.reads > 1) return sftp.status(id, STATUS_CODE.EOF);
    state.namesSent += 1;
    return sftp.name(id, [{ filename: 'big.bin', longname: 'big.bin', attrs: attrs(FILE, BIG) as never }]);
  });
  let reads = 0;
  sftp.on('OPEN', (id) => sftp.handle(id, handle().buf));
  sftp.on('READ', (id, _buf, _offset, length) => {
    // The first reads answered (a file under way, its temporary file in the volume), then silence.
    if (mode !== 'stalled-transfer' || ++reads > 8) return markSilent();
    sftp.data(id, Buffer.alloc(Math.min(length, 32 * 1024), 7));
  });
  sftp.on('CLOSE', (id) => sftp.status(id, STATUS_CODE.OK));
}
