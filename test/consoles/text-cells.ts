// The built-in text screen's framebuffer read back as text: each 8x13 cell of a Raw rectangle matched
// against the font's glyphs (a cursor cell is its glyph inverted). Shared by the screen tests of both
// substrates.
import { FONT, GLYPHS } from '../../server/src/agent/text-font.js';
import type { Rect } from './rfb.js';

/** The 13 row bytes of the cell at (column, row) of a full-screen 32-bit rectangle: lit where not black. */
function cellBits(rect: Rect, column: number, row: number, bytesPerPixel = 4): number[] {
  const bits: number[] = [];
  for (let line = 0; line < FONT.height; line += 1) {
    let byte = 0;
    for (let x = 0; x < FONT.width; x += 1) {
      const px = column * FONT.width + x;
      const py = row * FONT.height + line - rect.y;
      const at = (py * rect.width + px) * bytesPerPixel;
      if (rect.data.subarray(at, at + bytesPerPixel).some((b) => b !== 0)) byte |= 0x80 >> x;
    }
    bits.push(byte);
  }
  return bits;
}

/** The glyph a cell shows ('?' when it matches none; a cursor cell is the glyph inverted). */
function glyphOf(bits: number[]): { char: string; inverted: boolean } {
  for (const inverted of [false, true]) {
    const want = inverted ? bits.map((b) => ~b & 0xff) : bits;
    for (let code = FONT.first; code <= FONT.last; code += 1) {
      const glyph = GLYPHS.subarray((code - FONT.first) * FONT.height, (code - FONT.first + 1) * FONT.height);
      if (want.every((b, i) => b === glyph[i])) return { char: String.fromCharCode(code), inverted };
    }
  }
  return { char: '?', inverted: false };
}

/** The screen's rows of text read from a rectangle of whole rows, trailing spaces cut; and the cursor. */
export function readText(
  rect: Rect,
  bytesPerPixel = 4,
): { lines: string[]; cursor: [number, number] | null } {
  const lines: string[] = [];
  let cursor: [number, number] | null = null;
  for (let row = rect.y / FONT.height; row < (rect.y + rect.height) / FONT.height; row += 1) {
    let line = '';
    for (let column = 0; column < rect.width / FONT.width; column += 1) {
      const cell = glyphOf(cellBits(rect, column, row, bytesPerPixel));
      if (cell.inverted) cursor = [column, row];
      line += cell.char;
    }
    lines.push(line.trimEnd());
  }
  return { lines, cursor };
}
