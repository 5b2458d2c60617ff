import type { ChatbotRecordRow, ChatbotRepository, KnowledgeChunk, RetrievedChunk } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { embed, embedMany } from 'ai';
import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import type { ChatbotConfig } from './config';
import { guardedFetch } from './guarded-fetch';
import { openaiEmbeddingModel } from './providers';
import { knowledgeOf } from './records';

/** Characters per chunk, and how many of them the next chunk repeats. */
const CHUNK_CHARS = 800;
const CHUNK_OVERLAP = 100;
/** Dimensions of the local (no provider) embedding. */
const LOCAL_DIMENSIONS = 512;
/** Chunks given to the model per round, and the least similarity worth showing. */
const TOP_K = 4;
/** The least similarity worth showing, per embedding (the local one scores shared words, so lower). */
const MIN_SCORE = { openai: 0.2, local: 0.08 };
/** The most a knowledge URL may weigh. */
const MAX_FETCH_BYTES = 20 * 1024 * 1024;
/** A vectorization older than this is taken over (its vectorizer died). */
const STALE_MS = 5 * 60_000;

/** `text` cut into overlapping chunks at paragraph, sentence or word ends. */
export function chunkText(text: string, size = CHUNK_CHARS, overlap = CHUNK_OVERLAP): string[] {
  const clean = text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (!clean) return [];
  const chunks: string[] = [];
  let start = 0;
  while (start < clean.length) {
    let end = Math.min(clean.length, start + size);
    if (end < clean.length) {
      const window = clean.slice(start, end);
      const cut = Math.max(window.lastIndexOf('\n\n'), window.lastIndexOf('. '), window.lastIndexOf('\n'));
      if (cut > size * 0.5) end = start + cut + 1;
      else {
        const space = window.lastIndexOf(' ');
        if (space > size * 0.5) end = start + space;
      }
    }
    chunks.push(clean.slice(start, end).trim());
    if (end >= clean.length) break;
    start = Math.max(end - overlap, start + 1);
    // Start the overlap at a word.
    const space = clean.indexOf(' ', start);
    if (space > 0 && space < end) start = space + 1;
  }
  return chunks.filter(Boolean);
}

/**
 * The embedding used when the instance has no `openai_apikey`: words and word pairs (lower case, no
 * accents) hashed into 512 dimensions, log-weighted, unit length. Lexical, not semantic, but it needs no
 * provider and finds the chunk that shares the question's words.
 */
export function localEmbedding(text: string): number[] {
  const vector = new Array<number>(LOCAL_DIMENSIONS).fill(0);
  const words = text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1);
  const add = (term: string, weight: number) => {
    const hash = createHash('md5').update(term).digest();
    const index = hash.readUInt32LE(0) % LOCAL_DIMENSIONS;
    vector[index] += (hash[4] & 1 ? 1 : -1) * weight;
  };
  words.forEach((word, index) => {
    add(word, 1);
    if (index > 0) add(`${words[index - 1]} ${word}`, 0.5);
  });
  for (let i = 0; i < LOCAL_DIMENSIONS; i++) vector[i] = Math.sign(vector[i]) * Math.log1p(Math.abs(vector[i]));
  return normalise(vector);
}

function normalise(vector: number[]): number[] {
  const length = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return length > 0 ? vector.map((value) => value / length) : vector;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/h[1-6]|\/tr|\/section|\/article)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x?[0-9a-f]+|\w+);/gi, (match, entity: string) => {
      if (entity[0] === '#') {
        const code = entity[1].toLowerCase() === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
        return Number.isFinite(code) ? String.fromCodePoint(code) : match;
      }
      return ENTITIES[entity.toLowerCase()] ?? match;
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n\n')
    .trim();
}

/** CSV rows as "column: value; …" lines (the header names the columns). */
export function csvToText(csv: string): string {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const separator = (csv.split('\n')[0].match(/;/g)?.length ?? 0) > (csv.split('\n')[0].match(/,/g)?.length ?? 0) ? ';' : ',';
  for (let i = 0; i < csv.length; i++) {
    const char = csv[i];
    if (quoted) {
      if (char === '"' && csv[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === separator) {
      row.push(field.trim());
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && csv[i + 1] === '\n') i++;
      row.push(field.trim());
      rows.push(row);
      row = [];
      field = '';
    } else field += char;
  }
  if (field || row.length) rows.push([...row, field.trim()]);
  const [header, ...data] = rows.filter((cells) => cells.some(Boolean));
  if (!header) return '';
  if (!data.length) return header.join(', ');
  return data.map((cells) => cells.map((cell, index) => `${header[index] || `column ${index + 1}`}: ${cell}`).join('; ')).join('\n\n');
}

/**
 * The text of a PDF: its content streams (inflated when Flate-compressed) and the strings their text
 * operators show (Tj, TJ, ' and "). Enough for the text PDFs most documents are; scanned pages (images)
 * have no text to find.
 */
export function pdfToText(pdf: Buffer): string {
  const source = pdf.toString('latin1');
  const texts: string[] = [];
  const streams = /stream\r?\n([\s\S]*?)\r?\nendstream/g;
  for (let match = streams.exec(source); match; match = streams.exec(source)) {
    const raw = Buffer.from(match[1], 'latin1');
    let content: string;
    try {
      content = inflateSync(raw).toString('latin1');
    } catch {
      content = match[1];
    }
    if (!/(Tj|TJ|'|")/.test(content) || !/BT[\s\S]*ET/.test(content)) continue;
    const blocks = content.match(/BT[\s\S]*?ET/g) ?? [];
    for (const block of blocks) {
      const line: string[] = [];
      const ops = /\[((?:\\.|[^\]])*)\]\s*TJ|\(((?:\\.|[^\\)])*)\)\s*(?:Tj|'|")|(T\*|Td|TD)/g;
      for (let op = ops.exec(block); op; op = ops.exec(block)) {
        if (op[3]) line.push('\n');
        else if (op[2] !== undefined) line.push(pdfString(op[2]));
        else
          for (const part of op[1].matchAll(/\(((?:\\.|[^\\)])*)\)|(-?\d+(?:\.\d+)?)/g)) {
            if (part[1] !== undefined) line.push(pdfString(part[1]));
            else if (Number(part[2]) < -200) line.push(' ');
          }
      }
      texts.push(line.join('').replace(/\n+/g, '\n'));
    }
  }
  return texts.join('\n').trim();
}

function pdfString(value: string): string {
  return value.replace(/\\([nrtbf()\\]|[0-7]{1,3})/g, (_match, escape: string) => {
    const map: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '(': '(', ')': ')', '\\': '\\' };
    return map[escape] ?? String.fromCharCode(parseInt(escape, 8));
  });
}

/**
 * Knowledge: cut into chunks and embedded by the runners (records `pending` after an edit are claimed,
 * `processing`, then `done` with `isVectorized`, `lastVectorizedAt` and the chunk count, or `error`
 * with `vectorError`), stored in Postgres (chatbot_knowledge_chunks), and retrieved per round by
 * similarity (a dot product of unit vectors, in SQL). Embeddings come from OpenAI when the instance has
 * an `openai_apikey` (text-embedding-3-small, through OPENAI_BASE_URL and the SSRF guard), else from the
 * local lexical embedding.
 */
export class KnowledgeIndexer {
  private readonly fetch: typeof globalThis.fetch;
  private sweeping = false;

  constructor(
    private readonly records: ChatbotRepository,
    private readonly config: ChatbotConfig,
    private readonly logger: Logger,
  ) {
    this.fetch = guardedFetch(config.ssrf);
  }

  /** Vectorizes what is pending (one sweep at a time per process; other processes take other records). */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let done = 0;
    try {
      for (;;) {
        const claimed = await this.records.claimKnowledge(4, Date.now() - STALE_MS);
        if (!claimed.length) return done;
        await Promise.all(claimed.map((row) => this.vectorize(row)));
        done += claimed.length;
      }
    } finally {
      this.sweeping = false;
    }
  }

  /** `hasChunks`: whether the instance has any knowledge stored, when the caller read it already (asked here when absent). */
  async retrieve(instanceId: string, question: string, openaiApikey: string, hasChunks?: boolean): Promise<RetrievedChunk[]> {
    if (!question.trim() || !(hasChunks ?? (await this.records.hasChunks(instanceId)))) return [];
    const [vector] = await this.embed([question], openaiApikey);
    return this.records.nearestChunks(instanceId, vector, TOP_K, openaiApikey ? MIN_SCORE.openai : MIN_SCORE.local);
  }

  private async vectorize(row: ChatbotRecordRow): Promise<void> {
    const knowledge = knowledgeOf(row);
    try {
      const settings = await this.records.settings(row.instanceId);
      const { text, type } = await this.textOf(knowledge.content, knowledge.fileType);
      // A table's rows are records of their own: one chunk each (a question about one row finds it).
      const pieces = type === 'csv' ? text.split('\n\n').flatMap((row) => chunkText(row)) : chunkText([knowledge.tittle, text].filter(Boolean).join('\n\n'));
      if (!pieces.length) throw new Error('the content has no text');
      const vectors = await this.embed(pieces, settings?.openaiApikey ?? '');
      const chunks: KnowledgeChunk[] = pieces.map((piece, index) => ({ text: piece, embedding: vectors[index] }));
      await this.records.storeChunks(row.instanceId, row.id, row.updatedAt, chunks, {
        isVectorized: true,
        vectorStatus: 'done',
        lastVectorizedAt: Date.now(),
        vectorError: '',
        chunks: chunks.length,
        embedding: settings?.openaiApikey ? 'openai:text-embedding-3-small' : 'local',
      });
    } catch (error) {
      const message = (error as Error).message.slice(0, 500);
      this.logger.warn({ instanceId: row.instanceId, knowledgeId: row.id, err: message }, 'knowledge could not be vectorized');
      await this.records.storeChunks(row.instanceId, row.id, row.updatedAt, [], {
        isVectorized: false,
        vectorStatus: 'error',
        vectorError: message,
        chunks: 0,
      });
    }
  }

  private async embed(values: string[], openaiApikey: string): Promise<number[][]> {
    if (!openaiApikey) return values.map(localEmbedding);
    const model = await openaiEmbeddingModel(openaiApikey, this.config, this.fetch);
    if (values.length === 1) return [normalise((await embed({ model, value: values[0], maxRetries: 1 })).embedding)];
    return (await embedMany({ model, values, maxRetries: 1 })).embeddings.map(normalise);
  }

  /** The text of a knowledge record's content: plain text, a URL fetched through the SSRF guard, or base64 of a file. */
  private async textOf(content: string, fileType: string): Promise<{ text: string; type: string }> {
    if (/^https?:\/\//i.test(content)) {
      const response = await this.fetch(content, { signal: AbortSignal.timeout(this.config.functionTimeoutMs * 3) });
      if (!response.ok) throw new Error(`fetching the content answered ${response.status}`);
      const data = Buffer.from(await response.arrayBuffer());
      if (data.length > MAX_FETCH_BYTES) throw new Error('the content is larger than 20 MB');
      const type = fileType || typeFromMime(response.headers.get('content-type') ?? '', content);
      return { text: decode(data, type), type };
    }
    if (!fileType || fileType === 'txt') {
      const base64 =
        /^data:[^;,]*;base64,/.test(content) || (fileType === 'txt' && content.length > 0 && !/[^A-Za-z0-9+/=\s]/.test(content) && content.length % 4 === 0);
      return { text: base64 ? Buffer.from(content.replace(/^data:[^,]*,/, ''), 'base64').toString('utf8') : content, type: 'txt' };
    }
    return { text: decode(Buffer.from(content.replace(/^data:[^,]*,/, ''), 'base64'), fileType), type: fileType };
  }
}

function typeFromMime(mime: string, url: string): string {
  if (/pdf/i.test(mime) || /\.pdf($|\?)/i.test(url)) return 'pdf';
  if (/html/i.test(mime)) return 'html';
  if (/csv/i.test(mime) || /\.csv($|\?)/i.test(url)) return 'csv';
  return 'txt';
}

function decode(data: Buffer, type: string): string {
  switch (type) {
    case 'pdf':
      if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw new Error('the content is not a PDF');
      return pdfToText(data);
    case 'html':
      return htmlToText(data.toString('utf8'));
    case 'csv':
      return csvToText(data.toString('utf8'));
    default:
      return data.toString('utf8');
  }
}
