/**
 * bench/instances `--activity` (issue #38): memory per instance at work, not idle. Every device gets, in
 * the simulator, what a used account has: a history pushed at its first login (`--history` messages in
 * up to 100 chats), `--contacts` contacts (the history's push names and number-to-LID mappings, its chats
 * being theirs) and `--groups` groups it is in (created before the device is linked, so they arrive as
 * what the account already is in, not as notifications). Once every device is connected and its history
 * is in (ours: stored as `messages` rows; bare: counted in `messaging-history.set`), the traffic starts:
 * each instance receives `--per-minute` messages a minute from a peer's phone (the simulator's phones,
 * driven through its control API) and sends as many (ours through the worker's `send` op, bare through
 * its socket), spread evenly over the minute. After `--warm-up-minutes` of it, memory is measured as the
 * idle mode measures it (settled, compacting GC); `--soak-minutes m` then samples it every minute while the
 * traffic goes on and reports the growth after warm-up.
 */
import type { WaSimulator } from '@gw/wa-sim';
import { simControl } from '../support/sim-clients';

export interface ActivityOptions {
  history: number;
  contacts: number;
  groups: number;
  perMinute: number;
  warmUpMinutes: number;
  soakMinutes: number;
  /** Peer accounts of a side: they send to and receive from its instances, and are in its groups. */
  peers: number;
  /** How long to wait for every history to be in before starting the traffic anyway. */
  historyTimeoutSeconds: number;
}

export function activityOptions(args: Map<string, string>): ActivityOptions {
  const number = (name: string, fallback: number) => (args.has(name) ? Number(args.get(name)) : fallback);
  return {
    history: number('history', 1000),
    contacts: number('contacts', 200),
    groups: number('groups', 50),
    perMinute: number('per-minute', 1),
    warmUpMinutes: number('warm-up-minutes', 2),
    soakMinutes: number('soak-minutes', 0),
    peers: number('peers', 10),
    historyTimeoutSeconds: number('history-timeout', 900),
  };
}

export interface Peer {
  phone: string;
  jid: string;
  lid: string;
}

export interface ActivityDevices {
  devices: Array<{ phone: string; creds: unknown }>;
  peers: Peer[];
}

// --- in the simulator's process --------------------------------------------------------------------

/**
 * The history every device of a side gets (one array shared by all their accounts: the simulator keeps it
 * once): `history` messages, alternately received and sent, in up to 100 chats with the first contacts;
 * every contact's push name and LID. The peers are the first contacts, with their real LIDs.
 */
function sharedHistory(options: ActivityOptions, peers: Peer[], prefix: string): Array<Record<string, unknown>> {
  const now = Math.floor(Date.now() / 1000);
  const contacts = Array.from({ length: options.contacts }, (_, c) =>
    c < peers.length
      ? { pn: peers[c].jid, lid: peers[c].lid }
      : { pn: `${prefix}7${String(c).padStart(5, '0')}@s.whatsapp.net`, lid: `${prefix}8${String(c).padStart(5, '0')}@lid` },
  );
  const chats = Math.max(1, Math.min(100, contacts.length));
  const conversations = Array.from({ length: chats }, (_, c) => ({
    id: contacts[c]?.pn ?? `${prefix}7${String(c).padStart(5, '0')}@s.whatsapp.net`,
    messages: [] as Array<{ message: Record<string, unknown> }>,
    conversationTimestamp: now - 3600,
    unreadCount: 0,
  }));
  for (let m = 0; m < options.history; m++) {
    const chat = conversations[m % chats];
    chat.messages.push({
      message: {
        key: { remoteJid: chat.id, fromMe: m % 2 === 1, id: `3EB0A${String(m).padStart(12, '0')}` },
        message: { conversation: `history message ${m} ${'x'.repeat(20 + (m % 40))}` },
        messageTimestamp: now - 86_400 + m,
        status: m % 2 === 1 ? 4 : undefined,
      },
    });
  }
  return [
    {
      syncType: 0, // INITIAL_BOOTSTRAP
      conversations,
      pushnames: contacts.map((contact, c) => ({ id: contact.pn, pushname: `Contact ${c}` })),
      phoneNumberToLidMappings: contacts.map((contact) => ({ pnJid: contact.pn, lidJid: contact.lid })),
      chunkOrder: 0,
      progress: 100,
    },
  ];
}

/** Creates a side's peers, its `count` accounts with their groups and history, and links a device to each (not synced: the history comes at first login). */
export async function setupActivityDevices(sim: WaSimulator, prefix: string, count: number, options: ActivityOptions): Promise<ActivityDevices> {
  const { BufferJSON } = await import('@whiskeysockets/baileys');
  const peers: Peer[] = [];
  for (let p = 0; p < options.peers; p++) {
    const info = sim.createAccount({ phone: `${prefix}9${String(p).padStart(5, '0')}`, name: `Peer ${p}` });
    peers.push({ phone: info.phone, jid: info.jid, lid: info.lid });
  }
  const history = sharedHistory(options, peers, prefix);
  const peerAccounts = peers.map((peer) => sim.registry.get(peer.phone)!);
  const devices: ActivityDevices['devices'] = [];
  for (let i = 0; i < count; i++) {
    const phone = `${prefix}${String(i).padStart(6, '0')}`;
    sim.createAccount({ phone });
    const account = sim.registry.get(phone)!;
    for (let g = 0; g < options.groups; g++)
      sim.groups.create(account, `Group ${g}`, [peerAccounts[g % peerAccounts.length], peerAccounts[(g + 1) % peerAccounts.length]]);
    sim.phoneState.setHistory(phone, history);
    const { creds } = sim.provisionDevice(phone, undefined, { synced: false });
    devices.push({ phone, creds: JSON.parse(JSON.stringify(creds, BufferJSON.replacer)) as unknown });
    // Let the simulator's event loop breathe between accounts (it serves the other side's sockets meanwhile).
    if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
  return { devices, peers };
}

// --- in a side's process ---------------------------------------------------------------------------

/** What a side does with its instance `index`: send one message to `peer` (resolves once accepted). */
export type SendOut = (index: number, peer: Peer, text: string) => Promise<void>;

export interface TrafficStats {
  /** Messages the instances sent, and those that failed or were skipped (too many in flight). */
  sent: number;
  sendFailed: number;
  /** Messages the peers' phones sent to the instances, and those the simulator refused. */
  received: number;
  receiveFailed: number;
  skipped: number;
  firstSendError?: string;
}

/**
 * The steady traffic: every instance sends `perMinute` messages a minute and receives as many, spread over
 * the minute (instance i's send at i/n of it, its inbound half a minute later). At most 200 of each in flight.
 */
export function startTraffic(
  sim: { controlUrl: string },
  devices: Array<{ phone: string }>,
  peers: Peer[],
  perMinute: number,
  sendOut: SendOut,
): { stop(): Promise<TrafficStats> } {
  const stats: TrafficStats = { sent: 0, sendFailed: 0, received: 0, receiveFailed: 0, skipped: 0 };
  const n = devices.length;
  const intervalMs = 60_000 / (n * perMinute);
  const started = Date.now();
  const inFlight = new Set<Promise<void>>();
  let outbound = 0;
  let inbound = 0;
  let ticks = 0;
  const track = (work: Promise<void>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const tick = () => {
    const due = Math.floor((Date.now() - started) / intervalMs);
    while (ticks < due) {
      const index = ticks % n;
      const peer = peers[ticks % peers.length];
      ticks++;
      if (outbound >= 200) stats.skipped++;
      else {
        outbound++;
        track(
          sendOut(index, peer, `activity out ${ticks}`)
            .then(
              () => void stats.sent++,
              (error: unknown) => {
                stats.sendFailed++;
                stats.firstSendError ??= String((error as Error)?.message ?? error).slice(0, 300);
              },
            )
            .finally(() => outbound--),
        );
      }
      const target = devices[(index + Math.floor(n / 2)) % n];
      if (inbound >= 200) stats.skipped++;
      else {
        inbound++;
        track(
          simControl(sim, 'POST', `/sim/accounts/${peer.phone}/send`, { to: target.phone, text: `activity in ${ticks}` })
            .then(
              () => void stats.received++,
              () => void stats.receiveFailed++,
            )
            .finally(() => inbound--),
        );
      }
    }
  };
  const timer = setInterval(tick, Math.max(10, Math.min(1000, intervalMs)));
  return {
    async stop() {
      clearInterval(timer);
      await Promise.allSettled([...inFlight]);
      return stats;
    },
  };
}

/** RSS samples (MB) every minute of the soak, and the growth of the last over the first (the one after warm-up), in %. */
export interface Soak {
  minutes: number;
  samplesMb: number[];
  growthPct: number;
}

export async function soak(minutes: number, firstRss: number, measureRss: () => Promise<number>): Promise<Soak | undefined> {
  if (minutes <= 0) return undefined;
  const samples = [firstRss];
  for (let m = 0; m < minutes; m++) {
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    samples.push(await measureRss());
  }
  const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  return { minutes, samplesMb: samples.map(mb), growthPct: Math.round(((samples[samples.length - 1] - firstRss) / firstRss) * 1000) / 10 };
}
