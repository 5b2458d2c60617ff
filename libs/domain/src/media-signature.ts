/** The kinds of media a send declares. */
export type DeclaredMediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** What each kind accepts (real types, read from the bytes) and how an error names them. */
const ACCEPTED: Record<Exclude<DeclaredMediaKind, 'document'>, { types: readonly string[]; article: string; names: string }> = {
  image: { types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'], article: 'an image', names: 'jpeg, png, gif or webp' },
  video: { types: ['video/mp4', 'video/3gpp', 'video/quicktime'], article: 'a video', names: 'mp4, 3gp or mov' },
  // An mp4 container without video is an m4a: audio may come in any of the mp4 family.
  audio: {
    types: ['audio/ogg', 'audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/amr', 'audio/wav', 'video/mp4', 'video/3gpp', 'video/quicktime'],
    article: 'an audio',
    names: 'ogg/opus, mp3, m4a, aac, amr or wav',
  },
  sticker: { types: ['image/webp'], article: 'a sticker', names: 'webp' },
};

/** Types a phone or browser would run or render as a page: a document is never declared as one of them. */
const ACTIVE_TYPES =
  /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|text\/(x-)?javascript|application\/(x-)?javascript|text\/ecmascript|application\/ecmascript|application\/x-sh|text\/x-sh)$/i;

const base = (mimetype: string) => mimetype.split(';')[0].trim().toLowerCase();

/** The type the bytes declare by their signature (magic numbers), or null when it is none of those we know. */
export function sniffMediaType(data: Uint8Array): string | null {
  const bytes = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 64));
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1');
  const hex = bytes.subarray(0, 4).toString('hex');
  if (hex.startsWith('ffd8ff')) return 'image/jpeg';
  if (hex === '89504e47') return 'image/png';
  if (ascii(0, 4) === 'GIF8') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (/^M4[ABP] $/.test(brand)) return 'audio/mp4';
    if (brand.startsWith('3g')) return 'video/3gpp';
    if (brand === 'qt  ') return 'video/quicktime';
    return 'video/mp4';
  }
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 5) === '#!AMR') return 'audio/amr';
  if (ascii(0, 3) === 'ID3') return 'audio/mpeg';
  // ADTS (AAC) and MPEG audio frames both start with a sync word; the layer bits tell them apart.
  if (bytes[0] === 0xff && (bytes[1] & 0xf6) === 0xf0) return 'audio/aac';
  if (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && (bytes[1] & 0x06) !== 0) return 'audio/mpeg';
  if (ascii(0, 5) === '%PDF-') return 'application/pdf';
  const text = ascii(0, 64)
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart()
    .toLowerCase();
  if (text.startsWith('<!doctype html') || text.startsWith('<html') || text.startsWith('<head') || text.startsWith('<body')) return 'text/html';
  if (text.startsWith('<svg')) return 'image/svg+xml';
  if (text.startsWith('<?xml')) return 'text/xml';
  return null;
}

/**
 * Checks a send's file against the kind it claims: an image, video, audio or sticker must be one by its
 * bytes, and is declared with its real type (the claimed one when it names the same type, so codecs
 * parameters stay); a document may be anything but is never declared as an active type (HTML, SVG,
 * scripts), which becomes application/octet-stream. `declared`: the type the client or the server of
 * the URL gave. Answers the mimetype to send, or an error naming `field`.
 */
export function checkMediaBytes(
  kind: DeclaredMediaKind,
  data: Uint8Array,
  declared: string,
  field = 'file',
): { ok: true; mimetype: string } | { ok: false; error: string } {
  const real = sniffMediaType(data);
  if (kind === 'document') {
    if (ACTIVE_TYPES.test(base(declared)) || (real && ACTIVE_TYPES.test(real))) return { ok: true, mimetype: 'application/octet-stream' };
    // application/octet-stream claims nothing: the bytes may say more (a PDF).
    const claimed = base(declared) === 'application/octet-stream' ? '' : declared;
    return { ok: true, mimetype: claimed || real || 'application/octet-stream' };
  }
  const accepted = ACCEPTED[kind];
  if (!real || !accepted.types.includes(real)) {
    const found = real ? `its bytes are ${real}` : 'its bytes are of no such type';
    const served = declared && base(declared) !== real ? `, declared as ${base(declared)}` : '';
    return { ok: false, error: `${field} is not ${accepted.article} (${accepted.names}): ${found}${served}` };
  }
  const sent = kind === 'audio' && real.startsWith('video/') ? 'audio/mp4' : real;
  return { ok: true, mimetype: base(declared) === sent ? declared : sent };
}
