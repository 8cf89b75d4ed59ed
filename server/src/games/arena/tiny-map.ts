// The smallest map ioquake3's dedicated server loads (Quake 3 BSP, "IBSP" version 46): one shader, plane,
// node, leaf and model, a worldspawn and one deathmatch spawn point. The platform makes it rather than
// shipping a binary: ioq3ded needs a map to run, and Debian's package carries no game data.
const LUMPS = 17;
const HEADER = 8 + LUMPS * 8;

function ints(values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeInt32LE(v, i * 4));
  return b;
}

function floats(values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeFloatLE(v, i * 4));
  return b;
}

/** The map's bytes (448 of them). */
export function tinyMap(): Buffer {
  const entities = Buffer.from(
    '{\n"classname" "worldspawn"\n}\n{\n"classname" "info_player_deathmatch"\n"origin" "0 0 64"\n}\n\0',
    'latin1',
  );
  const shader = Buffer.alloc(72);
  shader.write('noshader', 0, 'latin1');
  // Lumps in the format's order; empty ones are allowed (no vis data, surfaces, brushes, lightmaps).
  const lumps: Buffer[] = [
    entities,
    shader,
    floats([0, 0, 1, 0]), // a plane: normal and distance
    ints([0, -1, -1, -512, -512, -512, 512, 512, 512]), // a node whose both sides are leaf 0
    ints([0, 0, -512, -512, -512, 512, 512, 512, 0, 0, 0, 0]), // a leaf in cluster 0, area 0
    Buffer.alloc(0), // leaf faces
    Buffer.alloc(0), // leaf brushes
    Buffer.concat([floats([-512, -512, -512, 512, 512, 512]), ints([0, 0, 0, 0])]), // the world model
    ...Array.from({ length: LUMPS - 8 }, () => Buffer.alloc(0)),
  ];
  const header = Buffer.alloc(HEADER);
  header.write('IBSP', 0, 'latin1');
  header.writeInt32LE(46, 4);
  let offset = HEADER;
  lumps.forEach((lump, i) => {
    header.writeInt32LE(offset, 8 + i * 8);
    header.writeInt32LE(lump.length, 12 + i * 8);
    offset += lump.length;
  });
  return Buffer.concat([header, ...lumps]);
}
