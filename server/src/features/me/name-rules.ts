// What a person's display name may be (seed document 1, "Identity": a name that is too short, too
// long, wrongly shaped or offensive is refused). Pure; the handler turns a refusal into a 400.
import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from 'obscenity';

export const NAME_MIN = 2;
export const NAME_MAX = 64;

// Letters and marks of any script, digits, single spaces and a little punctuation that real names
// carry (O'Brien, Smith-Jones, Dr. Who, AT&T Ops, Jean (JJ) Doe); it starts with a letter or digit.
const SHAPE = /^[\p{L}\p{N}][\p{L}\p{M}\p{N}.,'’&()_-]*(?: [\p{L}\p{M}\p{N}.,'’&()_-]+)*$/u;

// obscenity's English list, less words that are also common given names.
const GIVEN_NAMES = new Set(['dick']);
const matcher = new RegExpMatcher({
  ...englishDataset.removePhrasesIf((p) => GIVEN_NAMES.has(p.metadata?.originalWord ?? '')).build(),
  ...englishRecommendedTransformers,
});

export type NameRefusal = 'too_short' | 'too_long' | 'hidden_character' | 'bad_shape' | 'offensive';

// What no name a person gives may hold (DECISIONS.md §7), whatever else its own rule admits: controls
// (Cc), format characters (Cf: bidi overrides and isolates, zero-width space and joiners, word joiner,
// BOM, soft hyphen), line and paragraph separators, lone surrogates, and the other default-ignorable
// code points that render as nothing (Hangul fillers, the combining grapheme joiner, tags). A name
// shows in other people's lists and in mail: what it displays must be all it is. Variation selectors
// stay, since emoji need them (an organization may be "Acme ❤️").
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]|(?![\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}])\p{Default_Ignorable_Code_Point}/u;

/** The first character of `name` that no name may hold, as `U+XXXX`, or null. */
export function hiddenCharacter(name: string): string | null {
  const hit = HIDDEN.exec(name);
  return hit ? `U+${hit[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : null;
}

/** The name as stored (surrounding spaces trimmed, NFC), or why it is refused. */
export function checkName(raw: string): { ok: true; name: string } | { ok: false; reason: NameRefusal; message: string } {
  const name = raw.trim().normalize('NFC');
  const length = [...name].length;
  if (length < NAME_MIN) return { ok: false, reason: 'too_short', message: `A name has at least ${NAME_MIN} characters.` };
  if (length > NAME_MAX) return { ok: false, reason: 'too_long', message: `A name has at most ${NAME_MAX} characters.` };
  const hidden = hiddenCharacter(name);
  if (hidden !== null) {
    return {
      ok: false,
      reason: 'hidden_character',
      message: `A name holds no control, format, bidi or zero-width characters (it holds ${hidden}).`,
    };
  }
  if (!SHAPE.test(name)) {
    return {
      ok: false,
      reason: 'bad_shape',
      message:
        "A name is letters, digits, single spaces and . , ' - _ & ( ), starting with a letter or digit.",
    };
  }
  if (matcher.hasMatch(name)) return { ok: false, reason: 'offensive', message: 'Choose another name: this one reads as offensive.' };
  return { ok: true, name };
}
