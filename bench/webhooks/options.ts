/** bench/webhooks's role, phases, flags and small helpers (main.ts's header lists the flags). */
export type Role = 'orchestrate' | 'receiver' | 'relay' | 'bare';
export type Phase = 'receiver-warm' | 'relay-pre' | 'relay-steady' | 'relay-burst' | 'bare-pre' | 'bare-steady' | 'bare-burst';

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
export const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
export const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
export const num = (name: string, fallback: number) => (args.has(name) ? Number(args.get(name)) : fallback);

export const SECONDS = num('seconds', 60);
export const RATE = num('rate', 1000);
export const PRE_SECONDS = num('pre-seconds', 0);
/** Events already dispatched and delivered in the relay's tables before it starts (0: empty tables, as before 2026-12-04). */
export const SEED_ROWS = num('seed-rows', 0);
export const BURST = num('burst', 20_000);
export const INSTANCES = num('instances', 20);
export const CHATS = num('chats', 10);
/**
 * The events' bodies: `small` (~0.4 KB: the ids, a text and what the receiver checks; every run before 2026-12-07) or
 * `captured` (~2.6 KB: a real uazapi `messages` event, libs/testing/fixtures' text.sent.json, with each event's ids, as
 * every `messages` event carries its chat).
 */
export const PAYLOAD = (args.get('payload') ?? 'small') as 'small' | 'captured';
if (PAYLOAD !== 'small' && PAYLOAD !== 'captured') throw new Error(`--payload is small or captured, not ${String(PAYLOAD)}`);
export const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const SINK = (args.get('sink') ?? 'webhook') as 'webhook' | 'rabbitmq' | 'nats';
export const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** The JetStream server of `--sink nats` (its NATS_SINK_URL; the machine's NATS by default). */
export const natsSinkUrl = process.env.NATS_SINK_URL ?? 'nats://127.0.0.1:4222';
/** A nats:// URL's servers as the client takes them (host:port; comma-separated for several). */
export const natsServers = (url: string): string[] => url.split(',').map((server) => server.trim().replace(/^nats:\/\//, ''));

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const log = (message: string) => process.stderr.write(`[webhooks] ${message}\n`);

export const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
