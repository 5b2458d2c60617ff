// One phase of the chaos run (chaos-modes.ts has the overview): the traffic both ways on every instance
// while the phase's modes are injected, held and cleared, and each target's recovery; and the plan of
// phases (each mode alone, then all at once).
import type { ApiAnswer, ChaosInstance, ChaosMode, ChaosModeContext, ControlCall, GatewayCall } from './chaos-modes';

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
