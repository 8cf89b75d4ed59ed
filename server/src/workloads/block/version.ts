/** The Minecraft Java Edition version served (one mineflayer and the official client speak; docs/games.md). */
export const MINECRAFT_VERSION = '1.21.4';
/** Minecraft's RCON port, on the unit's address only: the edge never forwards it. */
export const RCON_PORT = 25575;
