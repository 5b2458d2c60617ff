import type { LinkPreviewData } from '@gw/contracts';
import { sniffMediaType } from '@gw/domain';
import { guardedConnector, SsrfGuard } from '@gw/platform';
import { Agent, request } from 'undici';
import { ApiError } from '../common/api-error';

const URL_IN_TEXT = /https?:\/\/[^\s<>"']+/i;
const PAGE_LIMIT = 1024 * 1024;
const IMAGE_LIMIT = 5 * 1024 * 1024;
const TIMEOUT_MS = 8_000;

export interface PreviewOptions {
  title?: string;
  description?: string;
  image?: string;
  large?: boolean;
  /** Stages a base64 image for the worker (large previews upload it); returns the staged file's id. */
  stage?: (base64: string) => Promise<string>;
}

/** `undefined` → take it from the page; a string of only whitespace → leave it out, fetch nothing for it. */
function custom(value: string | undefined): { use: 'page' } | { use: 'none' } | { use: 'value'; value: string } {
  if (value === undefined || value === '') return { use: 'page' };
  if (value.trim() === '') return { use: 'none' };
  return { use: 'value', value };
}

/** A page's image reference made absolute on the page's URL; '' when it is not a URL at all (`http://[bad`). */
function resolveOn(reference: string, base: string): string {
  try {
    return new URL(reference, base).toString();
  } catch {
    return '';
  }
}

function decodeEntities(text: string): string {
  return text
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)));
}

function meta(html: string, names: string[]): string {
  for (const name of names) {
    const pattern = new RegExp(`<meta[^>]+(?:property|name)=["']${name}["'][^>]*>`, 'i');
    const tag = pattern.exec(html)?.[0];
    const content = tag && /content=["']([^"']*)["']/i.exec(tag)?.[1];
    if (content) return decodeEntities(content.trim());
  }
  return '';
}

/**
 * Builds a link preview for the first link of a text (rule 1 of /send/text): custom fields win,
 * missing ones come from the page (fetched through the SSRF guard, size- and time-bounded).
 */
export class LinkPreviewBuilder {
  private readonly agent: Agent;

  constructor(private readonly ssrf: SsrfGuard) {
    this.agent = new Agent({ connect: guardedConnector(ssrf, { timeout: TIMEOUT_MS }) });
  }

  async build(text: string, options: PreviewOptions): Promise<LinkPreviewData | null> {
    const match = URL_IN_TEXT.exec(text);
    if (!match) return null;
    const url = match[0].replace(/[).,;!?]+$/, '');
    const title = custom(options.title);
    const description = custom(options.description);
    const image = custom(options.image);
    let page = '';
    if (title.use === 'page' || description.use === 'page' || image.use === 'page') page = await this.text(url).catch(() => '');
    const pageTitle = meta(page, ['og:title', 'twitter:title']) || decodeEntities(/<title[^>]*>([^<]*)<\/title>/i.exec(page)?.[1]?.trim() ?? '');
    const pageDescription = meta(page, ['og:description', 'twitter:description', 'description']);
    let imageSource = '';
    if (image.use === 'value') imageSource = image.value;
    else if (image.use === 'page') {
      const found = meta(page, ['og:image', 'twitter:image']);
      imageSource = found ? resolveOn(found, url) : '';
    }
    const preview: LinkPreviewData = {
      url,
      matchedText: match[0],
      title: title.use === 'value' ? title.value : title.use === 'page' ? pageTitle : '',
      description: description.use === 'value' ? description.value : description.use === 'page' ? pageDescription : '',
      thumbnailBase64: '',
      large: options.large === true,
    };
    if (!imageSource) return preview;
    if (/^https?:\/\//i.test(imageSource)) {
      const refused = await this.ssrf.check(imageSource).then(
        () => null,
        (error: Error) => error.message,
      );
      // A custom image the guard refuses is the client's error, large or small; a page's own og:image is just left out.
      if (refused && image.use === 'value') throw ApiError.badRequest(`linkPreviewImage refused: ${refused}`);
      if (refused) return preview;
    }
    if (preview.large) {
      // A large preview's image is uploaded by the worker (it makes the small thumbnail from it too).
      if (/^https?:\/\//i.test(imageSource)) {
        preview.image = { url: imageSource };
      } else if (options.stage) {
        preview.image = { fileId: await options.stage(imageSource) };
      }
      if (preview.image) return preview;
    }
    preview.thumbnailBase64 = await this.thumbnail(imageSource).catch(() => '');
    return preview;
  }

  private async text(url: string): Promise<string> {
    return (await this.fetch(url, PAGE_LIMIT)).toString('utf8');
  }

  /** A JPEG thumbnail (base64) from a URL or base64 image; resized when sharp is available. */
  private async thumbnail(source: string): Promise<string> {
    const data = /^https?:\/\//i.test(source) ? await this.fetch(source, IMAGE_LIMIT) : Buffer.from(source.replace(/^data:[^,]+,/, ''), 'base64');
    if (data.length === 0) return '';
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const sharp = require('sharp') as (input: Buffer) => { resize(w: number): { jpeg(o: object): { toBuffer(): Promise<Buffer> } } };
      return (await sharp(data).resize(192).jpeg({ quality: 60 }).toBuffer()).toString('base64');
    } catch {
      // Unresized, but only an image (a URL answering a page is no thumbnail).
      return data.length <= 64 * 1024 && sniffMediaType(data)?.startsWith('image/') ? data.toString('base64') : '';
    }
  }

  private async fetch(url: string, limit: number): Promise<Buffer> {
    await this.ssrf.check(url);
    const response = await request(url, {
      dispatcher: this.agent,
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: { 'user-agent': 'Mozilla/5.0 (compatible; wa-gateway link preview)' },
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump().catch(() => undefined);
      throw new Error(`status ${response.statusCode}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        response.body.destroy();
        break;
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
