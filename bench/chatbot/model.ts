/** The loopback model both sides call, and the clock that starts rounds at a fixed rate. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from './options';

interface ModelCall {
  requestAt: number;
  answerAt: number;
}

/**
 * A loopback OpenAI chat-completions server that answers at once; remembers when each request arrived
 * and was answered, under every tag of the contact's messages in it (the round's, and the chat's history).
 */
export async function startModel(): Promise<{ url: string; seen: Map<string, ModelCall[]>; close: () => void }> {
  const seen = new Map<string, ModelCall[]>();
  const server = createServer((req, res) => {
    const requestAt = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; messages?: Array<{ role: string; content: unknown }> };
      const users = (body.messages ?? []).filter((message) => message.role === 'user');
      const text = users.map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''))).join('\n');
      const tags = [...new Set([...text.matchAll(/\[(r\d+)\]/g)].map((match) => match[1]))];
      const tag = tags.at(-1) ?? '';
      const answer = JSON.stringify({
        id: `chatcmpl-${tag}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: `ok ${tag}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      });
      res.setHeader('content-type', 'application/json');
      const answerAt = performance.timeOrigin + performance.now();
      for (const each of tags) seen.set(each, [...(seen.get(each) ?? []), { requestAt, answerAt }]);
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => server.close() };
}

/** Runs `task(i)` for i < count at `rate` per second (not waiting for one to finish before the next starts). */
export async function atRate(count: number, rate: number, task: (index: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const running: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    running.push(task(i));
  }
  await Promise.all(running);
}
