// A real DNS server on loopback (dns2), UDP and TCP on one random port, serving the records a test
// publishes and withdraws: TXT records (each one or several character-strings), CNAMEs, addresses and
// SRV records. Start the
// app with `DNS_SERVERS: dns.server` and the domain checks query it like any other server.
//
// Like an authoritative server whose alias targets lie outside its zones, it answers a TXT question
// for an alias with the CNAME alone, so the resolver has to follow it; `chase` makes it answer as a
// recursive resolver does, the CNAME and the target's records in one answer. `mode` makes it fail:
// `silent` never answers (a timeout), `servfail` and `refused` answer with that error.
import dns2 from 'dns2';
import type { AddressInfo, Socket } from 'node:net';

const { Packet } = dns2;
/** RFC 1035 §4.1.1 response codes (dns2 has them as Packet.RCODE, its types do not). */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

type Txt = string | string[];

export interface TestDns {
  /** `127.0.0.1:PORT`, for DNS_SERVERS. */
  server: string;
  mode: 'answer' | 'silent' | 'servfail' | 'refused';
  chase: boolean;
  /** Every question asked, as `TYPE name`, in order. */
  queries: string[];
  /** Replaces the TXT records at `name` with these (a string[] is one record of several strings). */
  setTxt(name: string, ...records: Txt[]): void;
  addTxt(name: string, record: Txt): void;
  /** Makes `name` an alias of `target` (replacing what it held). */
  setCname(name: string, target: string): void;
  /** Replaces the address records at `name` (A for IPv4, AAAA for IPv6 literals). */
  setAddresses(name: string, ...addresses: string[]): void;
  /** Replaces the SRV records at `name` (`_minecraft._tcp.play.example.com`). */
  setSrv(name: string, ...records: Srv[]): void;
  /** Replaces the CAA records at `name` (RFC 8659), e.g. `{ tag: 'issue', value: 'ca.example' }`. */
  setCaa(name: string, ...records: { flags?: number; tag: string; value: string }[]): void;
  /** Withdraws everything at `name`: it no longer exists. */
  remove(name: string): void;
  close(): Promise<void>;
}

export interface Srv {
  target: string;
  port: number;
  priority?: number;
  weight?: number;
}

interface Node {
  txt: Txt[];
  cname: string | null;
  addresses?: string[];
  srv?: Srv[];
  caa?: { flags?: number; tag: string; value: string }[];
}

const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
const TYPE_NAMES: Record<number, string> = {
  [Packet.TYPE.TXT]: 'TXT',
  [Packet.TYPE.CNAME]: 'CNAME',
  [Packet.TYPE.A]: 'A',
  [Packet.TYPE.AAAA]: 'AAAA',
  [Packet.TYPE.SRV]: 'SRV',
  [Packet.TYPE.CAA]: 'CAA',
};

export async function startTestDns(): Promise<TestDns> {
  const zone = new Map<string, Node>();
  const state: Pick<TestDns, 'mode' | 'chase' | 'queries'> = { mode: 'answer', chase: false, queries: [] };

  const handle: dns2.DnsHandler = (request, send) => {
    const [question] = request.questions;
    if (!question) return;
    state.queries.push(`${TYPE_NAMES[question.type] ?? question.type} ${key(question.name)}`);
    if (state.mode === 'silent') return;
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    response.header.ra = 1;
    if (state.mode !== 'answer') {
      response.header.rcode = state.mode === 'servfail' ? RCODE.SERVFAIL : RCODE.REFUSED;
      void send(response);
      return;
    }
    const rr = { class: Packet.CLASS.IN, ttl: 300 };
    let name = key(question.name);
    for (let hops = 0; hops < 16; hops += 1) {
      const node = zone.get(name);
      if (!node) {
        response.header.rcode = RCODE.NXDOMAIN;
        break;
      }
      if (node.cname !== null) {
        response.answers.push({
          ...rr,
          name,
          type: Packet.TYPE.CNAME,
          domain: node.cname,
        } as dns2.Packet.Resource);
        if (question.type === Packet.TYPE.CNAME || !state.chase) break;
        name = node.cname;
        continue;
      }
      for (const address of node.addresses ?? []) {
        const v6 = address.includes(':');
        if (question.type === (v6 ? Packet.TYPE.AAAA : Packet.TYPE.A)) {
          response.answers.push({ ...rr, name, type: question.type, address } as dns2.Packet.Resource);
        }
      }
      if (question.type === Packet.TYPE.SRV) {
        for (const srv of node.srv ?? []) {
          response.answers.push({
            ...rr,
            name,
            type: Packet.TYPE.SRV,
            priority: srv.priority ?? 10,
            weight: srv.weight ?? 5,
            port: srv.port,
            target: srv.target,
          } as dns2.Packet.Resource);
        }
      }
      if (question.type === Packet.TYPE.CAA) {
        for (const { flags = 0, tag, value } of node.caa ?? []) {
          response.answers.push({
            ...rr,
            name,
            type: Packet.TYPE.CAA,
            flags,
            tag,
            value,
          } as dns2.Packet.Resource);
        }
      }
      if (question.type === Packet.TYPE.TXT) {
        for (const data of node.txt) {
          response.answers.push({ ...rr, name, type: Packet.TYPE.TXT, data } as dns2.Packet.Resource);
        }
      }
      break;
    }
    void send(response);
  };

  // One random port for both: the port UDP got may be taken for TCP by another test's socket, and then
  // another pair is tried.
  let udp!: ReturnType<typeof dns2.createUDPServer>;
  let tcp!: ReturnType<typeof dns2.createTCPServer>;
  let port = 0;
  for (let attempt = 0; ; attempt += 1) {
    udp = dns2.createUDPServer(handle);
    await udp.listen(0, '127.0.0.1');
    port = udp.address().port;
    tcp = dns2.createTCPServer(handle);
    const candidate = tcp;
    const bound = await new Promise<boolean>((resolve, reject) => {
      candidate.once('error', (err: NodeJS.ErrnoException) =>
        err.code === 'EADDRINUSE' && attempt < 10 ? resolve(false) : reject(err),
      );
      candidate.once('listening', () => resolve(true));
      candidate.listen(port, '127.0.0.1');
    });
    if (bound) break;
    const taken = udp;
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  }
  // Resolvers may keep a TCP connection open; close() ends them rather than wait out their idle time.
  const sockets = new Set<Socket>();
  tcp.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  if ((tcp.address() as AddressInfo).port !== port)
    throw new Error('the test DNS server could not take one port for UDP and TCP');

  const node = (name: string): Node => {
    let n = zone.get(key(name));
    if (!n) zone.set(key(name), (n = { txt: [], cname: null }));
    return n;
  };
  return {
    server: `127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    get chase() {
      return state.chase;
    },
    set chase(c) {
      state.chase = c;
    },
    queries: state.queries,
    setTxt(name, ...records) {
      Object.assign(node(name), { txt: records, cname: null });
    },
    addTxt(name, record) {
      const n = node(name);
      n.cname = null;
      n.txt.push(record);
    },
    setCname(name, target) {
      Object.assign(node(name), { txt: [], cname: key(target) });
    },
    setAddresses(name, ...addresses) {
      Object.assign(node(name), { cname: null, addresses });
    },
    setSrv(name, ...records) {
      Object.assign(node(name), { cname: null, srv: records });
    },
    setCaa(name, ...records) {
      node(name).caa = records;
    },
    remove(name) {
      zone.delete(key(name));
    },
    async close() {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
