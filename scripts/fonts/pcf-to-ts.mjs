// Makes server/src/agent/text-font.ts from an X11 PCF bitmap font (the misc-fixed 8x13 of xfonts-base, in
// the public domain): the printable ASCII glyphs as one byte per row, the most significant bit leftmost.
// Kept so the table can be made again, not run by the build:
//   node scripts/fonts/pcf-to-ts.mjs /usr/share/fonts/X11/misc/8x13.pcf.gz > server/src/agent/text-font.ts
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const file = process.argv[2];
let b = readFileSync(file);
if (file.endsWith('.gz')) b = gunzipSync(b);
if (b.toString('latin1', 0, 4) !== '\x01fcp') throw new Error('not a PCF font');
const tables = new Map();
for (let i = 0, n = b.readInt32LE(4); i < n; i += 1) {
  const at = 8 + i * 16;
  tables.set(b.readInt32LE(at), { format: b.readInt32LE(at + 4), offset: b.readInt32LE(at + 12) });
}
const METRICS = 1 << 2,
  BITMAPS = 1 << 3,
  ENCODINGS = 1 << 5;
function reader(type) {
  const { offset } = tables.get(type);
  const format = b.readInt32LE(offset);
  const be = (format & 4) !== 0;
  return {
    format,
    at: offset + 4,
    i32(o) {
      return be ? b.readInt32BE(o) : b.readInt32LE(o);
    },
    i16(o) {
      return be ? b.readInt16BE(o) : b.readInt16LE(o);
    },
    u16(o) {
      return be ? b.readUInt16BE(o) : b.readUInt16LE(o);
    },
  };
}
const m = reader(METRICS);
const metrics = [];
if (m.format & 0x100) {
  const n = m.i16(m.at);
  for (let i = 0; i < n; i += 1) {
    const o = m.at + 2 + i * 5;
    metrics.push({
      left: b[o] - 128,
      right: b[o + 1] - 128,
      width: b[o + 2] - 128,
      ascent: b[o + 3] - 128,
      descent: b[o + 4] - 128,
    });
  }
} else {
  const n = m.i32(m.at);
  for (let i = 0; i < n; i += 1) {
    const o = m.at + 4 + i * 12;
    metrics.push({
      left: m.i16(o),
      right: m.i16(o + 2),
      width: m.i16(o + 4),
      ascent: m.i16(o + 6),
      descent: m.i16(o + 8),
    });
  }
}
const bm = reader(BITMAPS);
const count = bm.i32(bm.at);
const offsets = Array.from({ length: count }, (_, i) => bm.i32(bm.at + 4 + i * 4));
const data = bm.at + 4 + count * 4 + 16;
const pad = 1 << (bm.format & 3);
const msbBit = (bm.format & 8) !== 0;
if (!msbBit || ((bm.format >> 4) & 3) !== 0) throw new Error('only MSB-first bits in byte units are read');
const enc = reader(ENCODINGS);
const min2 = enc.i16(enc.at),
  max2 = enc.i16(enc.at + 2),
  min1 = enc.i16(enc.at + 4);
if (min1 !== 0) throw new Error('a one-byte encoding was expected');
const glyphOf = (code) => {
  const index = enc.u16(enc.at + 10 + (code - min2) * 2);
  return code < min2 || code > max2 || index === 0xffff ? null : index;
};
const printable = Array.from({ length: 95 }, (_, i) => 32 + i);
const cellWidth = metrics[glyphOf(65)].width;
const ascent = Math.max(...printable.map((c) => metrics[glyphOf(c)].ascent));
const descent = Math.max(...printable.map((c) => metrics[glyphOf(c)].descent));
const height = ascent + descent;
if (cellWidth > 8) throw new Error('cells up to 8 pixels wide are kept in a byte');
const rows = [];
for (const code of printable) {
  const g = glyphOf(code);
  const mt = metrics[g];
  const w = mt.right - mt.left;
  const stride = Math.ceil(Math.ceil(w / 8) / pad) * pad;
  const cell = new Array(height).fill(0);
  for (let y = 0; y < mt.ascent + mt.descent; y += 1) {
    let row = 0;
    for (let x = 0; x < w; x += 1) {
      const byte = b[data + offsets[g] + y * stride + (x >> 3)];
      if (byte & (0x80 >> (x & 7))) row |= 0x80 >> (x + mt.left);
    }
    cell[ascent - mt.ascent + y] = row & 0xff;
  }
  rows.push(cell);
}
const hex = (n) => `0x${n.toString(16).padStart(2, '0')}`;
process.stdout
  .write(`// The text screen's font (agent/text-screen.ts): X11's misc-fixed ${cellWidth}x${height} (xfonts-base; public domain),
// printable ASCII from ' ' (0x20) to '~' (0x7e), ${height} rows of one byte per glyph, the leftmost pixel the
// most significant bit. Made by scripts/fonts/pcf-to-ts.mjs: an embedded table, because the text screen is
// what a host without Xvnc (and so, often, without X fonts) shows.
export const FONT = { width: ${cellWidth}, height: ${height}, first: 0x20, last: 0x7e } as const;

// prettier-ignore
export const GLYPHS = new Uint8Array([
${rows.map((cell, i) => `  ${cell.map(hex).join(', ')}, // ${JSON.stringify(String.fromCharCode(printable[i]))}`).join('\n')}
]);
`);
