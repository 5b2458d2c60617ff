import type { SseEventResponse } from './dto/sse.response';

/** One event as `GET /sse` writes it: `id`, `event` and the JSON `data` lines, then the blank line that ends it. */
export function sseFrame({ id, event, data }: SseEventResponse): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
