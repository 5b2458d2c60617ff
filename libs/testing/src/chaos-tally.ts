// What became of the chaos run's traffic (chaos-modes.ts has the overview): the phones' inboxes and the
// `messages` table read back, waited on until settled, and tallied (delivered once, twice, failed, lost,
// stuck; recovery times) against the run's goals.
import type { ControlCall, SqlQuery } from './chaos-modes';
import type { ChaosModeRun, ChaosSend, ChaosTraffic } from './chaos-phase';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  /**
   * Refused, yet at the phone, by answer: a refusal that did not tell the truth (a 504's send went out
   * later, say), so a client that tries again sends twice.
   */
  refusedButDelivered: Record<string, number>;
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
    refusedButDelivered: {},
    inbound: { sent: 0, stored: 0, withContent: 0, placeholder: 0, missing: 0, accountedPercent: 100 },
    recovery: { instances: 0, recovered: 0, p50S: null, p99S: null },
  };
  for (const send of traffic.sends) {
    if (send.status !== 200) {
      const reason = `${send.status} ${(send.error ?? '').replace(/chaos \S+ \S+ \S+ \S+/g, '…').slice(0, 80)}`.trim();
      tally.refused[reason] = (tally.refused[reason] ?? 0) + 1;
      if ((counts.get(send.text) ?? 0) > 0) tally.refusedButDelivered[reason] = (tally.refusedButDelivered[reason] ?? 0) + 1;
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
    // A status or an answer that did not tell the truth (Failed or refused, yet at the phone).
    tally.failedButDelivered === 0 &&
    Object.keys(tally.refusedButDelivered).length === 0 &&
    tally.inbound.accountedPercent === 100 &&
    tally.recovery.recovered === tally.recovery.instances &&
    (tally.recovery.p99S === null || tally.recovery.p99S <= recoveryGoalS)
  );
}
