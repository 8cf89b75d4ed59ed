// Just enough RFC 5322/2045/2047 reading to check what the sender produced (mailparser is not a
// dependency): headers, the subject's encoded words, and the text and HTML leaves of a multipart tree.

export interface ParsedMail {
  /** Lowercased names, unfolded values; the last occurrence wins. */
  headers: Record<string, string>;
  subject: string;
  text: string;
  html: string;
}

export function parseMail(raw: string): ParsedMail {
  const { headers, body } = splitEntity(raw);
  const leaves = leafParts(headers, body);
  return {
    headers,
    subject: decodeWords(headers.subject ?? ''),
    text: leaves.find((p) => p.type === 'text/plain')?.body ?? '',
    html: leaves.find((p) => p.type === 'text/html')?.body ?? '',
  };
}

function splitEntity(entity: string): { headers: Record<string, string>; body: string } {
  const m = /\r?\n\r?\n/.exec(entity);
  const head = m ? entity.slice(0, m.index) : entity;
  const body = m ? entity.slice(m.index + m[0].length) : '';
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function leafParts(headers: Record<string, string>, body: string): { type: string; body: string }[] {
  const contentType = headers['content-type'] ?? 'text/plain';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const lines = body.split(/\r?\n/);
    const sections: string[][] = [];
    let current: string[] | null = null;
    for (const line of lines) {
      if (line === `--${boundary}--`) break;
      if (line === `--${boundary}`) {
        current = [];
        sections.push(current);
      } else current?.push(line);
    }
    return sections.flatMap((s) => {
      const part = splitEntity(s.join('\n'));
      return leafParts(part.headers, part.body);
    });
  }
  return [{ type, body: decodeBody(body, headers['content-transfer-encoding'] ?? '7bit') }];
}

function decodeBody(body: string, encoding: string): string {
  switch (encoding.toLowerCase()) {
    case 'quoted-printable':
      return decodeQuotedPrintable(body.replace(/=\r?\n/g, ''));
    case 'base64':
      return Buffer.from(body, 'base64').toString('utf8');
    default:
      return body;
  }
}

function decodeQuotedPrintable(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const hex = s.slice(i + 1, i + 3);
    if (s[i] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(s[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** RFC 2047: `=?UTF-8?Q?...?=` and `=?UTF-8?B?...?=`; whitespace between two encoded words is dropped. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([bq])\?([^?]*)\?=/gi, (_m, _charset: string, enc: string, text: string) =>
      enc.toLowerCase() === 'b'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}
