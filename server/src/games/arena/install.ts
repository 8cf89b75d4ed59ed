// Where Debian's ioquake3-server puts the arena game's real program: read by the workload that runs it
// (workloads/arena-game.ts) and by the LXD unit image that carries it (substrate/lxd/image-programs.ts).
export const IOQ3DED = '/usr/lib/ioquake3/ioq3ded';
/** The package's own game logic, loaded by ioq3ded from the game directory. */
export const GAME_LIBRARY = '/usr/lib/ioquake3/baseq3/qagamex86_64.so';
