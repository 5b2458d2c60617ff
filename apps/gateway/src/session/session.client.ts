import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ErrorCode, type InstanceOp, type InstanceRpc, type PlaceRequest, RpcError, Subjects, type ConnectReply } from '@gw/contracts';
import { LeaseRepository } from '@gw/persistence';
import { BUS, GATEWAY_CONFIG } from '../runtime/tokens';
import type { GatewayConfig } from '../runtime/gateway-config';

const PLACE_ATTEMPTS = 4;
/**
 * A request unanswered this long makes the gateway check, and keep checking at this interval, that
 * somebody still holds the instance (a `status` request: answered from memory).
 */
const HOLDER_CHECK_MS = 1_000;
/** Pause between tries of a repeatable request while a takeover is under way. */
const TAKEOVER_RETRY_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Typed requests from the gateway to whichever session worker holds an instance. */
@Injectable()
export class SessionClient {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly leases: LeaseRepository,
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
    timeoutMs = this.config.rpcTimeoutMs,
  ): Promise<InstanceRpc[Op]['reply']> {
    const answer = this.bus.request<InstanceRpc[Op]['reply']>(Subjects.instance(instanceId, op), data, { timeoutMs });
    return timeoutMs > HOLDER_CHECK_MS ? this.whileHeld(instanceId, answer) : answer;
  }

  /**
   * For requests that are safe to repeat (a send: its message id is relayed at most once, whichever
   * worker gets it; see SendLedger), across a takeover: while the instance's lease is live or lapsed
   * only recently (its holder died and another worker is about to adopt it), NoSession, Fenced and the
   * new holder's NotConnected are tried again until the new holder answers, for at most
   * FAILOVER_WAIT_MS. Anything else, or an instance nobody held recently, answers at once as before.
   */
  async requestAcrossTakeover<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs = this.config.rpcTimeoutMs,
  ): Promise<InstanceRpc[Op]['reply']> {
    const deadline = Date.now() + this.config.failoverWaitMs;
    let inTakeover = false;
    for (;;) {
      try {
        return await this.request(instanceId, op, data, timeoutMs);
      } catch (error) {
        if (!(error instanceof RpcError) || Date.now() + TAKEOVER_RETRY_MS > deadline) throw error;
        // NotConnected alone is an instance that is down, not one changing hands.
        const retry =
          error.code === ErrorCode.Fenced ||
          (error.code === ErrorCode.NotConnected && inTakeover) ||
          (error.code === ErrorCode.NoSession && (inTakeover || (await this.leases.heldRecently(instanceId, this.config.failoverWaitMs))));
        if (!retry) throw error;
        inTakeover = true;
        await sleep(TAKEOVER_RETRY_MS);
      }
    }
  }

  /** Like request, but null instead of NoSession (for callers that have a fallback). */
  async requestIfHeld<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs?: number,
  ): Promise<InstanceRpc[Op]['reply'] | null> {
    try {
      return await this.request(instanceId, op, data, timeoutMs);
    } catch (error) {
      if (error instanceof RpcError && error.code === ErrorCode.NoSession) return null;
      throw error;
    }
  }

  /**
   * Connect: to the holder if there is one, else to any worker with capacity (queue group). A worker
   * may win a lease race between the two steps; then the holder is asked once more.
   */
  async connect(request: PlaceRequest['connect']): Promise<ConnectReply> {
    const timeoutMs = this.config.connectTimeoutMs;
    const held = await this.requestIfHeld(request.instanceId, 'connect', request, timeoutMs);
    if (held) return held;
    // The queue group hands each try to the next worker; a full one refuses and another may have room.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.bus.request<ConnectReply>(Subjects.place, { instanceId: request.instanceId, connect: request } satisfies PlaceRequest, { timeoutMs });
      } catch (error) {
        if (error instanceof RpcError && error.code === ErrorCode.NoSession) {
          throw new RpcError(ErrorCode.CapacityExhausted, 'no session worker is running');
        }
        if (error instanceof RpcError && error.code === ErrorCode.Conflict) {
          return this.request(request.instanceId, 'connect', request, timeoutMs);
        }
        if (error instanceof RpcError && error.code === ErrorCode.CapacityExhausted && attempt < PLACE_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /**
   * The answer, or NoSession as soon as nobody holds the instance any more while it is awaited. A
   * holder that is alive answers the check even while busy with the request; one that is slow to
   * answer the check (a loaded event loop) is given the benefit of the doubt.
   */
  private whileHeld<T>(instanceId: string, answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        settle();
      };
      const check = () => {
        this.bus
          .request(Subjects.instance(instanceId, 'status'), { instanceId }, { timeoutMs: HOLDER_CHECK_MS })
          .then(
            () => undefined,
            (error: unknown) => {
              if (error instanceof RpcError && error.code === ErrorCode.NoSession) {
                finish(() => reject(new RpcError(ErrorCode.NoSession, 'the session worker holding the instance went away')));
              }
            },
          )
          .finally(() => {
            if (!settled) timer = setTimeout(check, HOLDER_CHECK_MS);
          });
      };
      timer = setTimeout(check, HOLDER_CHECK_MS);
      answer.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  /** Fire-and-forget broadcast to every worker. */
  restartAll(): void {
    this.bus.publish(Subjects.restartAll, { requestedAt: Date.now() });
  }
}
