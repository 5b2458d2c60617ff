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

/** One send made by the traffic, and how the API answered it. */
export interface ChaosSend {
  mode: string;
  instance: string;
  kind: 'sync' | 'async' | 'campaign';
  to: string;
  newChat: boolean;
  text: string;
  /** The HTTP status (0: no answer); a campaign message has its campaign's. */
  status: number;
  error?: string;
  startedAt: number;
  endedAt: number;
}

/** One message a phone sent to an instance. */
export interface ChaosInbound {
  mode: string;
  instance: string;
  from: string;
  text: string;
  id?: string;
  /** The simulator refused to send it (not counted as sent). */
  error?: string;
}

/** What a mode's run left: its sends, inbound messages, when its fault ended and when each instance worked again. */
export interface ChaosModeRun {
  mode: string;
  skipped?: string;
  startedAt: number;
  faultEndedAt: number;
  /** Per target instance: ms from the fault's end to its first successful sync send (NaN: none). */
  recoveryMs: Map<string, number>;
}

export interface ChaosTraffic {
  control: ControlCall;
  controlUrl: string;
  gateway: GatewayCall;
  /** A phone the instance never talked to (an account at the simulator). */
  newContact(): Promise<string>;
  reconnect(instance: ChaosInstance): Promise<void>;
  /** The pause between two rounds of one instance's traffic. */
  intervalMs: number;
  /** Campaign messages per instance per mode. */
  campaignSize: number;
  /** How long the run waits for every target to recover after the fault's end. */
  recoveryTimeoutMs: number;
  sends: ChaosSend[];
  inbound: ChaosInbound[];
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let textSeq = 0;
const uniqueText = (mode: string, instance: string, kind: string) => `chaos ${mode} ${instance} ${kind} ${++textSeq}-${Math.random().toString(36).slice(2, 8)}`;

/** Whether the simulator refused a fault as a kind it does not know. */
const unknownKind = (error: unknown) => /unknown fault kind/.test(String((error as Error)?.message ?? error));

/**
 * Runs one phase: traffic on every instance; the modes injected (each on its `targets`, all at once)
 * after 2 s; held, ended; the traffic goes on until every target has recovered (or the timeout),
 * then a second more. Answers one run per mode.
 */
export async function runChaosPhase(
  traffic: ChaosTraffic,
  instances: ChaosInstance[],
  plan: Array<{ mode: ChaosMode; targets: ChaosInstance[] }>,
  label: string,
): Promise<ChaosModeRun[]> {
  // The sends of a phase count for it (a phase of one mode is named after it).
  const phaseName = label;
  const newChatsFor = new Set(plan.filter((p) => p.mode.newChats).flatMap((p) => p.targets.map((t) => t.id)));
  let running = true;

  const record = async (send: Omit<ChaosSend, 'status' | 'startedAt' | 'endedAt'>, path: string, token: string, body: unknown) => {
    const started = Date.now();
    let answer: ApiAnswer;
    try {
      answer = await traffic.gateway('POST', path, token, body);
    } catch (error) {
      answer = { status: 0, body: { error: String((error as Error)?.message ?? error) } };
    }
    const outcome: ChaosSend = { ...send, status: answer.status, startedAt: started, endedAt: Date.now() };
    if (answer.status !== 200) outcome.error = String(answer.body?.error ?? JSON.stringify(answer.body)).slice(0, 160);
    traffic.sends.push(outcome);
    return outcome;
  };

  const loop = async (instance: ChaosInstance) => {
    const mode = phaseName;
    // Each instance's campaign: its messages released by the scheduler while the fault plays.
    if (traffic.campaignSize > 0) {
      const texts = Array.from({ length: traffic.campaignSize }, () => uniqueText(mode, instance.id, 'campaign'));
      const started = Date.now();
      let answer: ApiAnswer;
      try {
        answer = await traffic.gateway('POST', '/sender/advanced', instance.token, {
          delayMin: 1,
          delayMax: 2,
          info: `chaos ${mode}`,
          messages: texts.map((text) => ({ number: instance.peer, type: 'text', text })),
        });
      } catch (error) {
        answer = { status: 0, body: { error: String(error) } };
      }
      for (const text of texts)
        traffic.sends.push({
          mode,
          instance: instance.id,
          kind: 'campaign',
          to: instance.peer,
          newChat: false,
          text,
          status: answer.status,
          startedAt: started,
          endedAt: Date.now(),
          ...(answer.status === 200 ? {} : { error: String(answer.body?.error ?? '').slice(0, 160) }),
        });
    }
    for (let round = 0; running; round++) {
      const newChat = newChatsFor.has(instance.id) && round % 2 === 1;
      const to = newChat ? await traffic.newContact() : instance.peer;
      // The phone writes to the instance while its sends go out.
      const inboundText = uniqueText(mode, instance.id, 'inbound');
      const inbound = traffic.control<{ id: string }>('POST', `/sim/accounts/${instance.peer}/send`, { to: instance.phone, text: inboundText }).then(
        ({ id }) => traffic.inbound.push({ mode, instance: instance.id, from: instance.peer, text: inboundText, id }),
        (error: unknown) => traffic.inbound.push({ mode, instance: instance.id, from: instance.peer, text: inboundText, error: String(error) }),
      );
      const asyncText = uniqueText(mode, instance.id, 'async');
      const asyncSend = record({ mode, instance: instance.id, kind: 'async', to, newChat, text: asyncText }, '/send/text', instance.token, {
        number: to,
        text: asyncText,
        async: true,
      });
      const text = uniqueText(mode, instance.id, 'sync');
      await record({ mode, instance: instance.id, kind: 'sync', to, newChat, text }, '/send/text', instance.token, { number: to, text });
      await Promise.all([inbound, asyncSend]);
      await sleep(traffic.intervalMs);
    }
  };

  const loops = instances.map(loop);
  await sleep(2_000);
  const runs = await Promise.all(
    plan.map(async ({ mode, targets }): Promise<ChaosModeRun> => {
      const ctx: ChaosModeContext = { control: traffic.control, controlUrl: traffic.controlUrl, targets, reconnect: traffic.reconnect };
      const modeStarted = Date.now();
      let rules: number[];
      try {
        rules = await mode.start(ctx);
      } catch (error) {
        if (!unknownKind(error)) throw error;
        return {
          mode: mode.name,
          skipped: `the simulator has no fault kind "${mode.kind}"`,
          startedAt: modeStarted,
          faultEndedAt: modeStarted,
          recoveryMs: new Map(),
        };
      }
      traffic.log?.(`${label}: ${mode.name} injected on ${targets.length}`);
      if (mode.holdMs > 0) await sleep(mode.holdMs);
      if (mode.end) await mode.end(ctx, rules);
      else for (const id of rules) await traffic.control('DELETE', `/sim/faults/${id}`).catch(() => undefined);
      const faultEndedAt = Date.now();
      const recoveryMs = new Map<string, number>();
      const deadline = faultEndedAt + traffic.recoveryTimeoutMs;
      for (;;) {
        for (const target of targets) {
          if (recoveryMs.has(target.id)) continue;
          const success = traffic.sends.find(
            (s) => s.instance === target.id && s.kind === 'sync' && s.status === 200 && s.startedAt >= faultEndedAt && (!mode.newChats || s.newChat),
          );
          if (success) recoveryMs.set(target.id, success.endedAt - faultEndedAt);
        }
        if (recoveryMs.size === targets.length || Date.now() > deadline) break;
        await sleep(200);
      }
      for (const target of targets) if (!recoveryMs.has(target.id)) recoveryMs.set(target.id, NaN);
      traffic.log?.(`${label}: ${mode.name} over; ${[...recoveryMs.values()].filter((ms) => !Number.isNaN(ms)).length}/${targets.length} recovered`);
      return { mode: mode.name, startedAt: modeStarted, faultEndedAt, recoveryMs };
    }),
  );
  await sleep(1_000);
  running = false;
  await Promise.all(loops);
  return runs;
}

/**
 * The phases of a run: each mode on every instance, one after the other, then (`allAtOnce`) every mode
 * at once, a global one (restart) on all instances and the others each on its share of them.
 */
export function chaosPlan(
  modes: ChaosMode[],
  instances: ChaosInstance[],
): { sequential: Array<{ mode: ChaosMode; targets: ChaosInstance[] }>; allAtOnce: Array<{ mode: ChaosMode; targets: ChaosInstance[] }> } {
  const local = modes.filter((mode) => !mode.global);
  return {
    sequential: modes.map((mode) => ({ mode, targets: instances })),
    allAtOnce: [
      ...modes.filter((mode) => mode.global).map((mode) => ({ mode, targets: instances })),
      ...local.map((mode, index) => ({ mode, targets: instances.filter((_, i) => i % local.length === index) })).filter((entry) => entry.targets.length > 0),
    ],
  };
}

const UNSETTLED = new Set(['Pending', 'Queued', '']);
/** A message as the simulator's inbox shows it (proto JSON). */
interface InboxMessage {
  conversation?: string | null;
  extendedTextMessage?: { text?: string | null } | null;
}
const textOf = (message: InboxMessage | null | undefined): string => message?.extendedTextMessage?.text ?? message?.conversation ?? '';

/** The phones' inboxes: how many times each text arrived (a text twice is a duplicate, whatever its ids). */
export async function arrivals(control: ControlCall, phones: Iterable<string>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const phone of new Set(phones)) {
    const inbox = await control<Array<{ message: InboxMessage | null }>>('GET', `/sim/accounts/${phone}/inbox`);
    for (const entry of inbox) {
      const text = textOf(entry.message);
      if (text.startsWith('chaos ')) counts.set(text, (counts.get(text) ?? 0) + 1);
    }
  }
  return counts;
}

interface OutboundRow {
  text: string;
  status: string;
  error: string;
}

interface InboundRow {
  message_id: string;
  text: string;
  message_type: string;
}

/** Our ledger's rows of the traffic's sends (by text) and of the phones' messages (by id). */
async function ledger(
  query: SqlQuery,
  traffic: Pick<ChaosTraffic, 'sends' | 'inbound'>,
): Promise<{ outbound: Map<string, OutboundRow[]>; inbound: Map<string, InboundRow> }> {
  const instances = [...new Set([...traffic.sends.map((s) => s.instance), ...traffic.inbound.map((m) => m.instance)])];
  const texts = traffic.sends.filter((s) => s.status === 200).map((s) => s.text);
  const outbound = new Map<string, OutboundRow[]>();
  for (const row of await query<OutboundRow>(
    `SELECT text, status, error FROM messages WHERE from_me AND instance_id = ANY($1::text[]) AND text = ANY($2::text[])`,
    [instances, texts],
  ))
    outbound.set(row.text, [...(outbound.get(row.text) ?? []), row]);
  const ids = traffic.inbound.flatMap((m) => (m.id ? [m.id] : []));
  const inbound = new Map<string, InboundRow>();
  for (const row of await query<InboundRow>(
    `SELECT message_id, text, message_type FROM messages WHERE NOT from_me AND instance_id = ANY($1::text[]) AND message_id = ANY($2::text[])`,
    [instances, ids],
  ))
    inbound.set(row.message_id, row);
  return { outbound, inbound };
}

/**
 * Waits until no accepted send is Pending/Queued and every message the phones sent is stored, or
 * `timeoutMs`: what is still unsettled then is counted stuck (or missing).
 */
export async function settleChaos(query: SqlQuery, traffic: Pick<ChaosTraffic, 'sends' | 'inbound'>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  const accepted = traffic.sends.filter((s) => s.status === 200);
  const sentIn = traffic.inbound.filter((m) => m.id);
  for (;;) {
    const { outbound, inbound } = await ledger(query, traffic);
    const unsettled = accepted.filter((s) => {
      const rows = outbound.get(s.text);
      return !rows || rows.every((row) => UNSETTLED.has(row.status));
    });
    const missing = sentIn.filter((m) => !inbound.has(m.id as string));
    if (unsettled.length === 0 && missing.length === 0) return true;
    if (Date.now() > deadline) return false;
    await sleep(1_000);
  }
}

export interface ChaosTally {
  /** Sends answered 200 (sync), queued (async) or taken into a campaign. */
  accepted: number;
  acceptedByKind: Record<ChaosSend['kind'], number>;
  deliveredOnce: number;
  duplicated: number;
  /** Accepted, never at the phone, not Failed with a reason, not stuck. */
  lost: number;
  failedWithReason: number;
  /** Still Pending/Queued after the settle time. */
  stuck: number;
  /** Failed, yet at the phone: a status that does not tell the truth. */
  failedButDelivered: number;
  /** Sends refused by the API (not accepted), by answer. */
  refused: Record<string, number>;
  inbound: { sent: number; stored: number; withContent: number; placeholder: number; missing: number; accountedPercent: number };
  recovery: { instances: number; recovered: number; p50S: number | null; p99S: number | null };
}

const percentile = (sorted: number[], p: number): number | null =>
  sorted.length === 0 ? null : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] / 10) / 100;

/** What became of one mode's sends and inbound messages, and its recovery. */
export async function tallyChaos(
  query: SqlQuery,
  counts: Map<string, number>,
  traffic: Pick<ChaosTraffic, 'sends' | 'inbound'>,
  run: Pick<ChaosModeRun, 'recoveryMs'>,
): Promise<ChaosTally> {
  const { outbound, inbound } = await ledger(query, traffic);
  const tally: ChaosTally = {
    accepted: 0,
    acceptedByKind: { sync: 0, async: 0, campaign: 0 },
    deliveredOnce: 0,
    duplicated: 0,
    lost: 0,
    failedWithReason: 0,
    stuck: 0,
    failedButDelivered: 0,
    refused: {},
    inbound: { sent: 0, stored: 0, withContent: 0, placeholder: 0, missing: 0, accountedPercent: 100 },
    recovery: { instances: 0, recovered: 0, p50S: null, p99S: null },
  };
  for (const send of traffic.sends) {
    if (send.status !== 200) {
      const reason = `${send.status} ${(send.error ?? '').replace(/chaos \S+ \S+ \S+ \S+/g, '…').slice(0, 80)}`.trim();
      tally.refused[reason] = (tally.refused[reason] ?? 0) + 1;
      continue;
    }
    tally.accepted++;
    tally.acceptedByKind[send.kind]++;
    const arrived = counts.get(send.text) ?? 0;
    const rows = outbound.get(send.text) ?? [];
    const failed = rows.some((row) => row.status === 'Failed' && row.error !== '');
    if (arrived === 1) tally.deliveredOnce++;
    else if (arrived > 1) tally.duplicated++;
    else if (failed) tally.failedWithReason++;
    else if (rows.length > 0 && rows.every((row) => UNSETTLED.has(row.status))) tally.stuck++;
    else tally.lost++;
    if (arrived > 0 && failed) tally.failedButDelivered++;
  }
  for (const message of traffic.inbound) {
    if (!message.id) continue;
    tally.inbound.sent++;
    const row = inbound.get(message.id);
    if (!row) tally.inbound.missing++;
    else {
      tally.inbound.stored++;
      if (row.text === message.text) tally.inbound.withContent++;
      else if (row.message_type === 'placeholder') tally.inbound.placeholder++;
    }
  }
  const accounted = tally.inbound.withContent + tally.inbound.placeholder;
  tally.inbound.accountedPercent = tally.inbound.sent === 0 ? 100 : Math.floor((accounted / tally.inbound.sent) * 10_000) / 100;
  const times = [...run.recoveryMs.values()];
  const recovered = times.filter((ms) => !Number.isNaN(ms)).sort((a, b) => a - b);
  tally.recovery = { instances: times.length, recovered: recovered.length, p50S: percentile(recovered, 50), p99S: percentile(recovered, 99) };
  return tally;
}

/** A mode's goals: 0 lost, 0 duplicated, 0 stuck, every inbound message accounted for, every target recovered within `recoveryGoalS`. */
export function chaosMet(tally: ChaosTally, recoveryGoalS: number): boolean {
  return (
    tally.lost === 0 &&
    tally.duplicated === 0 &&
    tally.stuck === 0 &&
    tally.inbound.accountedPercent === 100 &&
    tally.recovery.recovered === tally.recovery.instances &&
    (tally.recovery.p99S === null || tally.recovery.p99S <= recoveryGoalS)
  );
}
