// Colour and format codes players type into names and chat: Quake 3's `^N` and Minecraft's `§x` and
// its plugins' `&x` (what flying-squid writes into its own lines, `&eSteve joined the game.`). Shown
// raw they are noise, and in a slug they leave their letters behind (`^1Rocket` → `1rocket`).
// `&` counts only before one of Minecraft's lowercase code letters, so `Tom & Jerry` and `R&D` stay.
const CODES = /\^[0-9a-z]|§[0-9a-fk-orx]|&[0-9a-fk-or]/gi;
const AMPERSAND_CODE = /^&[0-9a-fk-or]$/;

export function stripColourCodes(text: string): string {
  return text.replace(CODES, (code) => (code.startsWith('&') && !AMPERSAND_CODE.test(code) ? code : ''));
}
