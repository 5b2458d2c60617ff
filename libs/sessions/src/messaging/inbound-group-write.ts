import type { OutboxNotice } from '@gw/contracts';
import type { InboundGroupRepository, NewOutboxEvent, Tx } from '@gw/persistence';
import { InboundBatch } from './inbound-batch';
import { OBSERVED, OBSERVED_AS } from './inbound/inbound-context';
import type { Waiting } from './inbound-store-options';

/** What one write of a group came to: its value, or nothing because its lease was gone. */
export type GroupOutcome = { value: unknown } | { fenced: true };

/** What a group transaction's work hands back: each write's outcome, the events per instance and their notices. */
export interface GroupWritten {
  outcomes: GroupOutcome[];
  batches: Array<{ instanceId: string; events: NewOutboxEvent[] }>;
  notices: Map<string, EventsNotice>;
}

/**
 * The work of one group transaction of InboundStore (inside its fence, `held`: the instances whose
 * lease the proof found still ours): the writes of the group in waves, their parked statements
 * together (InboundBatch), each write's events kept in arrival order.
 */
export async function writeGroupWithin(
  tx: Tx,
  group: ReadonlyArray<Waiting>,
  held: ReadonlySet<string>,
  groups: InboundGroupRepository,
): Promise<GroupWritten> {
  const results = new Array<GroupOutcome>(group.length);
  // Each write's events, in arrival order whatever wave it runs in: an instance's events keep their order in the outbox.
  const eventsOf = group.map(() => [] as NewOutboxEvent[]);
  const batches: Array<{ instanceId: string; events: NewOutboxEvent[] }> = [];
  // Receipts' status changes, our own messages' copies and the chats' updates park and go together,
  // one statement per kind (InboundBatch).
  const receipts = InboundBatch.open(tx, groups);
  // The writes parked and not finished yet (each until it finished, parking once per statement kind it reaches).
  const parked: Array<{ slot: number; done: Promise<unknown> }> = [];
  // Every parked write goes on once a round handed it its rows (or failed it): all of them have
  // finished before this returns or throws, so none is still writing when the group commits or
  // rolls back (a statement sent after the ROLLBACK would run outside the transaction and the fence).
  // One round is one statement for every parked write (InboundBatch); a write that parks again (a
  // copy, then its chat) goes in the next round, until none is parked.
  const settleParked = async () => {
    while (parked.length > 0) {
      let again: Set<number>;
      try {
        again = await receipts.flush(parked);
      } catch (error) {
        await Promise.allSettled(parked.map(({ done }) => done));
        parked.length = 0;
        throw error;
      }
      const finished = parked.filter((write) => !again.has(write.slot));
      parked.splice(0, parked.length, ...parked.filter((write) => again.has(write.slot)));
      // A finished write that failed fails the group (the finally waits for those still parked).
      for (const write of finished) results[write.slot] = { value: await write.done };
    }
  };
  try {
    // In waves (waves()): every instance's first write, then each one's next, and so on; writes of one
    // instance that share no key with each other or with a write between them go in one wave. A
    // write comes after every write of its instance it may depend on (its parked write is written
    // before the next one starts), and the writes of a wave park together, so a round carries all of
    // them. In arrival order an instance's next write flushed every parked write after one or two.
    group.forEach((entry, position) => {
      if (held.has(entry.lease.instanceId)) batches.push({ instanceId: entry.lease.instanceId, events: eventsOf[position] });
    });
    for (const wave of waves(group)) {
      receipts.startWave();
      // The writes of a wave share nothing (waves()), so they run at once: their statements go out
      // pipelined on the group's connection, one round trip for the wave instead of one per write.
      const started = wave.map(async (position) => {
        const entry = group[position];
        if (!held.has(entry.lease.instanceId)) {
          results[position] = { fenced: true };
          return;
        }
        const { done, parked: isParked } = await receipts.run(position, () => entry.work(tx, eventsOf[position]));
        if (isParked) parked.push({ slot: position, done });
        else results[position] = { value: await done };
      });
      // Every write of the wave has finished or parked before the round, even when one failed.
      const settled = await Promise.allSettled(started);
      const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      await settleParked();
    }
  } finally {
    // A failed group: the parked writes fail with it (and run again alone in the fallback), and
    // have stopped before the transaction ends.
    receipts.close();
    await Promise.allSettled(parked.map(({ done }) => done));
  }
  return { outcomes: results, batches, notices: noticesOf(batches) };
}

/**
 * The positions of a group's writes in waves (arrival order within a wave). A write that names what it
 * touches (`keys`: its messages, its sender's contact, and the chat whose row it updates) goes in the wave
 * after the last one holding a write of its instance that names one of them, or a write that names none;
 * a write that names none goes after every write of its instance. So writes of one instance about
 * different messages and chats share a wave (a busy instance's receipts, copies and received messages:
 * one round each, not one wave each), and every write comes after the ones it may depend on: a receipt
 * after its message's copy, a second receipt of a message after the first.
 *
 * What a write observes (`observe …` keys, InboundContext's chatObservationKeys and senderObservationKeys)
 * may be shared: writes observing a chat under the very same identifiers, or a sender with the same
 * identifiers and push name, go in one wave; the round applies their chat observations to the row one
 * by one, in the group's order (InboundGroupRepository), and the sender is observed once for all of them
 * (InboundBatch.once). So a busy chat's messages take one wave, not one each. A write naming the chat or
 * contact otherwise (`chat …`, `contact …`), or observing it differently (its JID alone, then its JID and
 * LID; another push name), still comes in a wave after them.
 */
export function waves(group: ReadonlyArray<Waiting>): number[][] {
  const result: number[][] = [];
  type Seen = { after: number; last: number; subjects: Map<string, { wave: number; as: string | null }> };
  const instances = new Map<string, Seen>();
  group.forEach((entry, position) => {
    const id = entry.lease.instanceId;
    let seen = instances.get(id);
    if (!seen) instances.set(id, (seen = { after: -1, last: -1, subjects: new Map() }));
    let wave: number;
    if (entry.keys === undefined || entry.keys.length === 0) {
      wave = seen.last + 1;
      seen.after = wave;
    } else {
      // Each key's subject, and how the write observes it (null: it changes it otherwise, alone).
      const subjects = new Map<string, string | null>();
      for (const key of entry.keys) {
        const split = key.startsWith(OBSERVED) ? key.indexOf(OBSERVED_AS) : -1;
        const subject = split < 0 ? key : key.slice(OBSERVED.length, split);
        const as = split < 0 ? null : key.slice(split + OBSERVED_AS.length);
        subjects.set(subject, subjects.has(subject) && subjects.get(subject) !== as ? null : as);
      }
      wave = seen.after + 1;
      for (const [subject, as] of subjects) {
        const prior = seen.subjects.get(subject);
        if (prior) wave = Math.max(wave, as !== null && prior.as === as ? prior.wave : prior.wave + 1);
      }
      for (const [subject, as] of subjects) seen.subjects.set(subject, { wave, as });
    }
    seen.last = Math.max(seen.last, wave);
    (result[wave] ??= []).push(position);
  });
  return result;
}

/** What a notice says of the events its commit wrote (OutboxNotice: a follower that wants none of them skips it). */
export type EventsNotice = Pick<OutboxNotice, 'types' | 'sentByApi'>;

/**
 * The notice's account of these events: their types, each once, and `sentByApi` when every `messages`
 * event among them is of a message sent through the API (our own copies).
 */
export function noticeOf(events: ReadonlyArray<NewOutboxEvent>): EventsNotice {
  const types = [...new Set(events.map((event) => event.eventType))];
  const messages = events.filter((event) => event.eventType === 'messages');
  const sentByApi =
    messages.length > 0 &&
    messages.every((event) => {
      const message = (event.payload as { message?: { fromMe?: unknown; wasSentByApi?: unknown } }).message;
      return message?.fromMe === true && message.wasSentByApi === true;
    });
  return sentByApi ? { types, sentByApi } : { types };
}

/** noticeOf() each instance's events in these batches. */
export function noticesOf(batches: ReadonlyArray<{ instanceId: string; events: ReadonlyArray<NewOutboxEvent> }>): Map<string, EventsNotice> {
  const events = new Map<string, NewOutboxEvent[]>();
  for (const batch of batches) events.set(batch.instanceId, [...(events.get(batch.instanceId) ?? []), ...batch.events]);
  return new Map([...events].map(([instanceId, all]) => [instanceId, noticeOf(all)]));
}
