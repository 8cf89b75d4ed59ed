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

export type NameRefusal = 'too_short' | 'too_long' | 'bad_shape' | 'offensive';

/** The name as stored (surrounding spaces trimmed, NFC), or why it is refused. */
export function checkName(raw: string): { ok: true; name: string } | { ok: false; reason: NameRefusal; message: string } {
  const name = raw.trim().normalize('NFC');
  const length = [...name].length;
  if (length < NAME_MIN) return { ok: false, reason: 'too_short', message: `A name has at least ${NAME_MIN} characters.` };
  if (length > NAME_MAX) return { ok: false, reason: 'too_long', message: `A name has at most ${NAME_MAX} characters.` };
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
