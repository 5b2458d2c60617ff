import { type Bus, type BusSubscription, ConnectionLostError } from '@gw/bus';
import { ErrorCode, heldRequestKey, type HolderRejoined, type InstanceOp, type InstanceRpc, RpcError, type StatusReply, Subjects } from '@gw/contracts';

/**
 * A request unanswered this long makes the requester check, and keep checking at this interval, that
 * somebody still holds the instance (a `status` request: answered from memory).
 */
export const HOLDER_CHECK_MS = 1_000;
/**
 * Pause between tries of a repeatable request while a takeover is under way, unless the instance's new holder
 * says it arrived (Subjects.instanceArrived) sooner.
 */
export const TAKEOVER_RETRY_MS = 250;

/**
 * A try of a repeatable request abandoned because the instance's holder said its bus came back on a NATS server
 * (Subjects.holderRejoined): the request, or its reply, may have been routed through the server it lost, and
 * would never be answered. Tried again at once (a send is relayed at most once, whichever try reaches the holder).
 */
export class HolderRejoinedError extends RpcError {
  constructor(instanceId: string) {
    super(ErrorCode.Timeout, `the session worker holding ${instanceId} lost its NATS server with the request in flight`);
  }
}

/**
 * Holder checks that must find the request not taken, or answered while the answer has not come, before its try is
 * given up as lost (RequestLostError). Two: a check travels the same way as its request, and its answer the same way
 * as the request's answer, in order, so one would do, but a check that overtook inside a process (the bus's handlers
 * start asynchronously) must not count.
 */
export const LOST_AFTER_CHECKS = 2;

/**
 * A try of a repeatable request given up because its holder, alive and answering its checks, says it never took it,
 * or that it answered it while the answer never came (in LOST_AFTER_CHECKS checks): the request or its answer was lost
 * on the bus (a NATS server killed with it on its way, a route that dropped it). Tried again at once instead of
 * waiting out the request's timeout (a send tried again is answered from the ledger when it went already).
 */
export class RequestLostError extends RpcError {
  constructor(instanceId: string) {
    super(ErrorCode.Timeout, `the session worker holding ${instanceId} never received the request, or its answer was lost on the bus`);
  }
}

export interface TakeoverRequesterOptions {
  /** How long a repeatable request follows a takeover at most (FAILOVER_WAIT_MS; ADR 0007). */
  failoverWaitMs: number;
  /**
   * Whether the instance's lease is live or lapsed less than `withinMs` ago (LeaseRepository.heldRecently):
   * a takeover under way. Without it, NoSession is never taken for a takeover (answered at once).
   */
  heldRecently?: (instanceId: string, withinMs: number) => Promise<boolean>;
}

/**
 * Requests to whichever session worker holds an instance, for every caller that must not hang on a dead
 * holder: the gateway's SessionClient (sync sends and every other op) and the async queue's dispatcher
 * (ADR 0007, ADR 0012).
 */
export class TakeoverRequester {
  /** The repeatable requests in flight, by instance: each abandons its try when the holder rejoins the bus. */
  private readonly rejoinable = new Map<string, Set<() => void>>();
  private rejoinSubscription: BusSubscription | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly options: TakeoverRequesterOptions,
  ) {}

  /**
   * Asks the holder; RpcError(NoSession) at once when no worker holds the instance, and soon after the
   * holder dies with the request (kill -9, lost host): the bus drops a dead worker's subscriptions,
   * but a request it had already taken is never answered, so it would wait out its whole timeout.
   */
  request<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs: number,
    /** Settles when the caller stops waiting for the answer (a try abandoned): the holder is not checked any more. */
    abandoned?: Promise<unknown>,
    /** The request's key (heldRequestKey), for a repeatable one: the holder checks ask whether it was taken and answered. */
    awaiting?: string,
  ): Promise<InstanceRpc[Op]['reply']> {
    const answer = this.bus.request<InstanceRpc[Op]['reply']>(Subjects.instance(instanceId, op), data, { timeoutMs });
    return timeoutMs > HOLDER_CHECK_MS ? this.whileHeld(instanceId, answer, abandoned, awaiting) : answer;
  }

  /**
   * For requests that are safe to repeat (a send: its message id is relayed at most once, whichever
   * worker gets it; see SendLedger), across a takeover: while the instance's lease is live or lapsed
   * only recently (its holder died and another worker is about to adopt it), NoSession, Fenced and the
   * new holder's NotConnected are tried again until the new holder answers, for at most
   * failoverWaitMs; so is a request whose NATS server was lost while it was in flight
   * (ConnectionLostError). Anything else, or an instance nobody held recently, answers at once.
   */
  async requestAcrossTakeover<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs: number,
  ): Promise<InstanceRpc[Op]['reply']> {
    return this.retrying(
      instanceId,
      op,
      data,
      timeoutMs,
      true,
      // NotConnected alone is an instance that is down, not one changing hands. A request whose NATS
      // server was lost with it in flight goes again once the bus is on another server of the cluster,
      // and so does one whose holder's server was lost (HolderRejoinedError).
      async (error, inTakeover) =>
        error instanceof ConnectionLostError ||
        error instanceof HolderRejoinedError ||
        error instanceof RequestLostError ||
        error.code === ErrorCode.Fenced ||
        (error.code === ErrorCode.NotConnected && inTakeover) ||
        (error.code === ErrorCode.NoSession && (inTakeover || (await this.heldRecently(instanceId)))),
    );
  }

  /**
   * For any request, safe to repeat or not, across a hand-over (a draining worker, issue #39) or a
   * takeover: while the instance's lease is live or lapsed only recently, a refusal marked not run
   * (RpcError.notRun: nobody subscribed, or the holder handing the instance over refused it before it
   * started) is tried again until a holder runs it, for at most failoverWaitMs. Nothing that may have
   * started is repeated; an instance nobody held recently answers NoSession at once, as before.
   */
  async requestAcrossHandOver<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs: number,
  ): Promise<InstanceRpc[Op]['reply']> {
    return this.retrying(
      instanceId,
      op,
      data,
      timeoutMs,
      false,
      async (error, inTakeover) => error.notRun === true && error.code === ErrorCode.NoSession && (inTakeover || (await this.heldRecently(instanceId))),
    );
  }

  /**
   * The request, tried again every TAKEOVER_RETRY_MS while `again` says so of its RpcError, for at most
   * failoverWaitMs; `inTakeover` tells `again` whether an earlier try was already retried. A `repeatable` try is
   * abandoned (HolderRejoinedError) when the instance's holder says its bus came back on a NATS server.
   */
  private async retrying<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs: number,
    repeatable: boolean,
    again: (error: RpcError, inTakeover: boolean) => Promise<boolean>,
  ): Promise<InstanceRpc[Op]['reply']> {
    const deadline = Date.now() + this.options.failoverWaitMs;
    let inTakeover = false;
    // From the first refusal on: the new holder's notice of arrival ends the wait before the next try.
    let arrival: ArrivalWatch | undefined;
    try {
      for (;;) {
        try {
          if (!repeatable) return await this.request(instanceId, op, data, timeoutMs);
          const rejoin = this.watchRejoin(instanceId);
          try {
            // Abandoned, the try's holder checks stop with it (its answer, should it still come, is dropped). The checks
            // also ask whether the holder took the request and answered it, where it carries its own id (a send).
            const key = heldRequestKey(op, data) ?? undefined;
            return await Promise.race([this.request(instanceId, op, data, timeoutMs, rejoin.rejoined, key), rejoin.rejoined]);
          } finally {
            rejoin.close();
          }
        } catch (error) {
          if (!(error instanceof RpcError) || Date.now() + TAKEOVER_RETRY_MS > deadline || !(await again(error, inTakeover))) throw error;
          inTakeover = true;
          arrival ??= new ArrivalWatch(this.bus, instanceId);
          await arrival.next(TAKEOVER_RETRY_MS);
        }
      }
    } finally {
      arrival?.close();
    }
  }

  /**
   * `rejoined` rejects with HolderRejoinedError as soon as the instance's holder says its bus came back on a NATS
   * server; `close()` once the try is over.
   */
  private watchRejoin(instanceId: string): { rejoined: Promise<never>; close: () => void } {
    this.rejoinSubscription ??= this.bus.subscribe(Subjects.holderRejoined, (data) => {
      const ids = (data as Partial<HolderRejoined> | null)?.instanceIds;
      if (!Array.isArray(ids)) return undefined;
      for (const id of ids) for (const abandon of [...(this.rejoinable.get(id) ?? [])]) abandon();
      return undefined;
    });
    let abandon: () => void = () => undefined;
    const rejoined = new Promise<never>((_, reject) => (abandon = () => reject(new HolderRejoinedError(instanceId))));
    rejoined.catch(() => undefined);
    const waiting = this.rejoinable.get(instanceId) ?? new Set<() => void>();
    waiting.add(abandon);
    this.rejoinable.set(instanceId, waiting);
    return {
      rejoined,
      close: () => {
        waiting.delete(abandon);
        if (waiting.size === 0 && this.rejoinable.get(instanceId) === waiting) this.rejoinable.delete(instanceId);
      },
    };
  }

  private async heldRecently(instanceId: string): Promise<boolean> {
    return this.options.heldRecently ? this.options.heldRecently(instanceId, this.options.failoverWaitMs) : false;
  }

  /**
   * The answer, or NoSession as soon as nobody holds the instance any more while it is awaited. A
   * holder that is alive answers the check even while busy with the request; one that is slow to
   * answer the check (a loaded event loop) is given the benefit of the doubt. With `awaiting` (the
   * request's key), each check also asks whether the holder took the request and answered it: RequestLostError once
   * it says "not taken" or "answered" LOST_AFTER_CHECKS times (a holder that does not keep keys says nothing, and is
   * waited for).
   */
  private whileHeld<T>(instanceId: string, answer: Promise<T>, abandoned?: Promise<unknown>, awaiting?: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      // Checks that found the request not taken, or answered while this side still waits: lost, one way or the other.
      let lostChecks = 0;
      const stop = () => {
        stopped = true;
        clearTimeout(timer);
      };
      abandoned?.then(stop, stop);
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        settle();
      };
      const check = () => {
        this.bus
          .request<StatusReply>(Subjects.instance(instanceId, 'status'), awaiting ? { instanceId, awaiting } : { instanceId }, {
            timeoutMs: HOLDER_CHECK_MS,
          })
          .then(
            (reply) => {
              if (!awaiting || typeof reply?.received !== 'boolean') return;
              // An answer sent before the check's own answer comes first on the same way back: still waited for, it
              // was lost. A holder that does not say `answered` is judged on `received` alone.
              if (reply.received && reply.answered !== true) return;
              lostChecks += 1;
              if (lostChecks >= LOST_AFTER_CHECKS) finish(() => reject(new RequestLostError(instanceId)));
            },
            (error: unknown) => {
              if (error instanceof RpcError && error.code === ErrorCode.NoSession) {
                finish(() => reject(new RpcError(ErrorCode.NoSession, 'the session worker holding the instance went away')));
              }
            },
          )
          .finally(() => {
            if (!settled && !stopped) timer = setTimeout(check, HOLDER_CHECK_MS);
          });
      };
      timer = setTimeout(check, HOLDER_CHECK_MS);
      answer.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }
}

/**
 * One retrying request's watch for its instance's new holder (Subjects.instanceArrived), kept from its first
 * refusal to its end, so that a notice that comes while a try is under way still ends the next wait. A notice
 * missed (published before the watch's subscription reached the bus) leaves the wait to its timer, as before.
 */
class ArrivalWatch {
  private readonly subscription: BusSubscription;
  private arrived = false;
  private wake: (() => void) | undefined;

  constructor(bus: Bus, instanceId: string) {
    this.subscription = bus.subscribe(Subjects.instanceArrived(instanceId), () => {
      this.arrived = true;
      this.wake?.();
      return undefined;
    });
  }

  /** Resolves after `ms`, or at once when the holder arrived since the last wait, or when it arrives meanwhile. */
  async next(ms: number): Promise<void> {
    if (!this.arrived) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    this.arrived = false;
  }

  close(): void {
    this.wake?.();
    this.subscription.unsubscribe();
  }
}
