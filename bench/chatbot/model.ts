/** The loopback model both sides call, and the clock that starts rounds at a fixed rate. */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerQuestions, ask, loadMark, type LoadMark, stopChild } from '../support/processes';
import { sleep } from './options';

export interface ModelCall {
  requestAt: number;
  answerAt: number;
}

/** What the model's process tells the bench of each call it answered: the tags in it and when. */
interface Seen {
  seen: string[];
  requestAt: number;
  answerAt: number;
}

export interface Model {
  url: string;
  /**
   * The calls that carried `tag` (the round's, or a chat's history with it) matching `match`, once the
   * model's process has reported one (it reports each call as it answers it); undefined after 5 s.
   */
  call(tag: string, match?: (call: ModelCall) => boolean): Promise<ModelCall | undefined>;
  /** The model's process's CPU and event loop so far. */
  load(): Promise<LoadMark>;
  close(): Promise<void>;
}

/**
 * A loopback OpenAI chat-completions server that answers at once, in a process of its own, as a
 * provider is on another machine: its work (parsing each request, writing each answer) is neither
 * ours nor the bare bot's, and it does not share an event loop with the chatbot's runner (until
 * 2026-12-06 it ran in the bench's process, beside the follower and the runner, and its CPU counted
 * as ours). It reports every call it answered, under every tag of the contact's messages in it.
 */
export async function startModel(): Promise<Model> {
  const child = fork(process.argv[1], ['model-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const seen = new Map<string, ModelCall[]>();
  const waiting = new Map<string, Set<() => void>>();
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url?: string }) => (message?.url ? resolve(message.url) : reject(new Error('the model process did not start'))));
    child.once('exit', (code) => reject(new Error(`the model process exited (${code})`)));
  });
  child.on('message', (message: Partial<Seen>) => {
    if (!Array.isArray(message?.seen)) return;
    const call = { requestAt: Number(message.requestAt), answerAt: Number(message.answerAt) };
    for (const tag of message.seen) {
      seen.set(tag, [...(seen.get(tag) ?? []), call]);
      for (const wake of waiting.get(tag) ?? []) wake();
    }
  });
  const find = (tag: string, match: (call: ModelCall) => boolean) => seen.get(tag)?.find(match);
  return {
    url,
    call: async (tag, match = () => true) => {
      const found = find(tag, match);
      if (found) return found;
      return new Promise<ModelCall | undefined>((resolve) => {
        const wake = () => {
          const call = find(tag, match);
          if (call) finish(call);
        };
        const finish = (call: ModelCall | undefined) => {
          clearTimeout(timer);
          waiting.get(tag)?.delete(wake);
          if (waiting.get(tag)?.size === 0) waiting.delete(tag);
          resolve(call);
        };
        const timer = setTimeout(() => finish(undefined), 5_000);
        waiting.set(tag, (waiting.get(tag) ?? new Set()).add(wake));
      });
    },
    load: () => ask<LoadMark>(child, 'load'),
    close: () => stopChild(child),
  };
}

/** The model's process (`startModel`): serves until the bench disconnects. */
export async function modelChild(): Promise<void> {
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
      res.end(answer);
      if (tags.length > 0) process.send?.({ seen: tags, requestAt, answerAt } satisfies Seen);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  answerQuestions({ load: () => loadMark() });
  process.once('disconnect', () => process.exit(0));
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
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
