/**
 * The chaos run of issue 34 (bench/chaos, and its short version in apps/gateway/test/chaos.e2e.spec.ts):
 * instances with traffic both ways (sync, async and campaign sends, messages the phones send them)
 * while the simulator plays WhatsApp's failure modes, one after the other and then all at once. Every
 * send carries a unique text; at the end the phones' inboxes and the `messages` table say what became
 * of each: delivered once, twice, Failed with a reason, lost, or still Pending/Queued (stuck).
 *
 * CHAOS_MODES is the table of modes: how each is injected through `POST /sim/faults`, how it is
 * cleared, and what recovery means for it. A mode whose fault kind the simulator does not know (it
 * answers "unknown fault kind") is reported as skipped, so the table may name modes still being added.
 *
 * This file: the table and the types it speaks (instances, the control and API calls). A phase's run is
 * chaos-phase.ts; reading back and tallying what became of every message, chaos-tally.ts.
 */

/** One instance under traffic: its API token, its account at the simulator, and the phone it talks to. */
export interface ChaosInstance {
  id: string;
  token: string;
  /** The instance's own phone number (its account at the simulator). */
  phone: string;
  /** Its linked device's JID at the simulator. */
  device: string;
  /** A phone it already has a chat with (the warm-up exchanged a message): sends to it, and it sends back. */
  peer: string;
}

export type ControlCall = <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<T>;
/** An API answer: its status and its JSON body (an `{error}` when refused). */
export interface ApiAnswer {
  status: number;
  body: { error?: unknown } | undefined;
}
export type GatewayCall = (method: 'GET' | 'POST', path: string, token: string, body?: unknown) => Promise<ApiAnswer>;
export type SqlQuery = <T>(sql: string, parameters?: unknown[]) => Promise<T[]>;

/** What a mode is given to inject and clear its fault. */
export interface ChaosModeContext {
  control: ControlCall;
  /** The simulator's control API (for the answers that are not JSON). */
  controlUrl: string;
  /** The instances the mode is injected on. */
  targets: ChaosInstance[];
  /** Connects an instance again through the API (`POST /instance/connect`), as its operator would. */
  reconnect(instance: ChaosInstance): Promise<void>;
}

export interface ChaosMode {
  name: string;
  /** The simulator's fault kind (the mode is skipped when the simulator does not know it). */
  kind: string;
  /** How it is injected, how it is cleared, what recovery means: the table's columns, for the report. */
  inject: string;
  clear: string;
  recovery: string;
  /** Injects the fault; answers the ids of the standing rules it added (cleared by the default `end`). */
  start(ctx: ChaosModeContext): Promise<number[]>;
  /** How long the fault stands after `start` before `end` (0: an immediate fault, over once executed). */
  holdMs: number;
  /** Ends the fault (default: removes the rules `start` added). The fault's end is when this resolves. */
  end?(ctx: ChaosModeContext, rules: number[]): Promise<void>;
  /** Sends to chats the instances never had (the new-chat limits): recovery is such a send answered 200. */
  newChats?: boolean;
  /** The simulator's fault is global (a restart): in the all-at-once phase it is injected once. */
  global?: boolean;
  /** Settles fast enough for the e2e's short version. */
  quick?: boolean;
}

/** Rules added, one per target. */
async function perTarget(ctx: ChaosModeContext, body: (target: ChaosInstance) => Record<string, unknown>): Promise<number[]> {
  const ids: number[] = [];
  for (const target of ctx.targets) {
    const answer = await ctx.control<{ id?: number }>('POST', '/sim/faults', body(target));
    if (answer.id !== undefined) ids.push(answer.id);
  }
  return ids;
}

/** The current WhatsApp Web version the simulator serves (as web.whatsapp.com/sw.js carries it). */
async function currentRevision(controlUrl: string): Promise<number> {
  // JavaScript, not JSON: `self.__swData=JSON.parse("{…\\"client_revision\\":N…}")`.
  const text = await (await fetch(`${controlUrl}/sim/wa-version`)).text();
  const match = /client_revision\\?":(\d+)/.exec(text);
  if (!match) throw new Error(`no client_revision in /sim/wa-version: ${text.slice(0, 120)}`);
  return Number(match[1]);
}

const immediate = (name: string, body: (target: ChaosInstance) => Record<string, unknown>, what: string, quick = true): ChaosMode => ({
  name,
  kind: String(body({ id: '', token: '', phone: '', device: '', peer: '' }).kind),
  inject: what,
  clear: 'nothing to clear: the socket is closed once',
  recovery: 'the session reconnects by itself; a sync send answered 200',
  holdMs: 0,
  quick,
  start: (ctx) => perTarget(ctx, body),
});

/**
 * The modes. Each copies a reported behaviour of WhatsApp's server: the simulator's faults.ts and
 * send-limits.ts / undecryptable.ts cite the reports each one is made after.
 */
export const CHAOS_MODES: ChaosMode[] = [
  {
    name: 'restart',
    kind: 'restart',
    inject: 'POST /sim/faults {kind:"restart", downMs:3000}: every socket closed, the server away for 3 s',
    clear: 'the server listens again after downMs',
    recovery: 'every instance reconnects by itself; a sync send answered 200, from when the server listens again',
    holdMs: 0,
    global: true,
    quick: true,
    start: async (ctx) => {
      await ctx.control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
      return [];
    },
  },
  {
    name: 'ack-lost',
    kind: 'ack',
    inject: 'POST /sim/faults {kind:"ack", mode:"lost", device, count:2}: the connection cut with the stanza in flight',
    clear: 'consumed after 2 stanzas, or removed (DELETE /sim/faults/{id}) after 5 s',
    recovery: 'the session reconnects; the send is retried with the same id; a sync send answered 200',
    holdMs: 5_000,
    quick: true,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'ack', mode: 'lost', device: t.phone, count: 2 })),
  },
  {
    name: 'ack-drop',
    kind: 'ack',
    inject: 'POST /sim/faults {kind:"ack", mode:"drop", device, count:2}: the message routed, its ack never sent',
    clear: 'consumed after 2 messages, or removed after 5 s',
    recovery: 'a sync send answered 200; the unacked ones are sent again with their id by the sweep (UNACKED_RESEND_AFTER_MS)',
    holdMs: 5_000,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'ack', mode: 'drop', device: t.phone, count: 2 })),
  },
  {
    name: 'ack-error',
    kind: 'ack',
    inject: 'POST /sim/faults {kind:"ack", mode:"error", error:"479", device, count:1}: an error ack instead of routing',
    clear: 'consumed after 1 message, or removed after 3 s',
    recovery: 'that send Failed with the code; a sync send answered 200',
    holdMs: 3_000,
    quick: true,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'ack', mode: 'error', error: '479', device: t.phone, count: 1 })),
  },
  immediate('drop', (t) => ({ kind: 'drop', device: t.device }), 'POST /sim/faults {kind:"drop", device}: the socket destroyed, no close frame'),
  immediate(
    'stream-error-515',
    (t) => ({ kind: 'stream-error', device: t.device, code: 515 }),
    'POST /sim/faults {kind:"stream-error", code:515}: restart required',
  ),
  immediate(
    'stream-error-503',
    (t) => ({ kind: 'stream-error', device: t.device, code: 503 }),
    'POST /sim/faults {kind:"stream-error", code:503}: service unavailable',
  ),
  immediate(
    'stream-error-500',
    (t) => ({ kind: 'stream-error', device: t.device, code: 500 }),
    'POST /sim/faults {kind:"stream-error", code:500}: internal error',
  ),
  {
    name: 'conflict',
    kind: 'conflict',
    inject: 'POST /sim/faults {kind:"conflict", device}: <stream:error><conflict type="replaced"/> (440), another client took the session',
    clear: 'the operator connects the instance again (POST /instance/connect) 2 s later: a 440 is terminal by design',
    recovery: 'after POST /instance/connect, a sync send answered 200 (sends meanwhile are refused with a reason)',
    holdMs: 2_000,
    quick: true,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'conflict', device: t.device })),
    end: async (ctx) => {
      for (const target of ctx.targets) await ctx.reconnect(target);
    },
  },
  {
    name: 'ignore-pings',
    kind: 'ignore-pings',
    inject: 'POST /sim/faults {kind:"ignore-pings", device}: keepalive pings never answered',
    clear: "removed after 40 s (more than Baileys' 30 s keepalive period)",
    recovery: 'a sync send answered 200 (traffic keeps the connection alive; a silent one is declared lost and reconnected)',
    holdMs: 40_000,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'ignore-pings', device: t.phone })),
  },
  {
    name: 'reachout-timelock',
    kind: 'reachout-timelock',
    inject: 'POST /sim/faults {kind:"reachout-timelock", device, untilMs:10000}: sends to new chats error-acked 463, the mex notification',
    clear: 'the lock lifts by itself after 10 s (notification is_active:false)',
    recovery: 'a sync send to a new chat answered 200 (sends to existing chats flow throughout; new-chat async sends wait and then go)',
    holdMs: 10_000,
    newChats: true,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'reachout-timelock', device: t.phone, untilMs: 10_000 })),
    end: async () => undefined,
  },
  {
    name: 'new-chat-cap',
    kind: 'new-chat-cap',
    inject: 'POST /sim/faults {kind:"new-chat-cap", device, limit:1, cycleMs:10000}: over 1 new chat per cycle error-acked 475',
    clear: 'the cap replaced by one of 1000 per cycle after 10 s (a new cycle, status NONE)',
    recovery: 'a sync send to a new chat answered 200 once the cycle reset',
    holdMs: 10_000,
    newChats: true,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'new-chat-cap', device: t.phone, limit: 1, cycleMs: 10_000 })),
    end: async (ctx) => {
      await perTarget(ctx, (t) => ({ kind: 'new-chat-cap', device: t.phone, limit: 1_000, cycleMs: 3_600_000 }));
    },
  },
  {
    name: 'corrupt',
    kind: 'corrupt',
    inject: 'POST /sim/faults {kind:"corrupt", device, count:3}: the instance\'s next 3 deliveries garbled (retry receipts)',
    clear: 'consumed after 3 deliveries, or removed after 5 s',
    recovery: 'every message the phones sent is stored; a sync send answered 200',
    holdMs: 5_000,
    quick: true,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'corrupt', device: t.device, count: 3 })),
  },
  ...(['bad-mac', 'no-session', 'never', 'unavailable'] as const).map((mode): ChaosMode => ({
    name: `undecryptable-${mode}`,
    kind: 'undecryptable',
    inject: `POST /sim/faults {kind:"undecryptable", mode:"${mode}", device, count:3}: inbound the instance cannot decrypt`,
    clear: 'consumed after 3 messages, or removed after 5 s',
    recovery: 'every message the phones sent is stored, with its content or as a placeholder; a sync send answered 200',
    holdMs: 5_000,
    quick: mode !== 'never',
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'undecryptable', mode, device: t.phone, count: 3 })),
  })),
  {
    name: 'omit-pn',
    kind: 'omit-pn',
    inject: 'POST /sim/faults {kind:"omit-pn", device:peer}: the peer\'s messages addressed by LID without sender_pn',
    clear: 'removed after 5 s',
    recovery: 'every message the phones sent is stored; a sync send answered 200',
    holdMs: 5_000,
    start: (ctx) => perTarget(ctx, (t) => ({ kind: 'omit-pn', device: t.peer })),
  },
  {
    name: 'client-outdated',
    kind: 'client-outdated',
    inject: 'POST /sim/faults {kind:"client-outdated", minVersion:current+1}, then each socket dropped: the next login gets 405',
    clear: 'stays (the version moved); the session learns it from WA_VERSION_URL (/sim/wa-version)',
    recovery: 'the session logs in again with the new version and its credentials (no QR); a sync send answered 200',
    holdMs: 0,
    start: async (ctx) => {
      const revision = await currentRevision(ctx.controlUrl);
      const { id } = await ctx.control<{ id: number }>('POST', '/sim/faults', { kind: 'client-outdated', minVersion: `2.3000.${revision + 1}` });
      for (const target of ctx.targets) await ctx.control('POST', '/sim/faults', { kind: 'drop', device: target.device });
      return [id];
    },
    end: async () => undefined,
  },
];
