import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ErrorCode, type InstanceOp, type InstanceRpc, type PlaceRequest, RpcError, Subjects, type ConnectReply } from '@gw/contracts';
import { TakeoverRequester } from '@gw/session-client';
import { InstanceRepository, LeaseRepository } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { BUS, GATEWAY_CONFIG } from '../runtime/tokens';
import type { GatewayConfig } from '../runtime/gateway-config';

const PLACE_ATTEMPTS = 4;

/** Typed requests from the gateway to whichever session worker holds an instance. */
@Injectable()
export class SessionClient {
  /** The dead-holder check and the takeover retry (ADR 0007), shared with the async queue's dispatcher. */
  private readonly requester: TakeoverRequester;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    leases: LeaseRepository,
    private readonly instances: InstanceRepository,
  ) {
    this.requester = new TakeoverRequester(bus, { failoverWaitMs: config.failoverWaitMs, heldRecently: (id, withinMs) => leases.heldRecently(id, withinMs) });
  }

  /**
   * Asks the holder; RpcError(NoSession) at once when no worker holds the instance, and soon after the
   * holder dies with the request (kill -9, lost host): the bus drops a dead worker's subscriptions,
   * but a request it had already taken is never answered, so it would wait out its whole timeout.
   * While the instance moves between workers (a drain's hand-over, a takeover), a request refused
   * before it started is tried again until the next holder answers (issue #39; requestAcrossHandOver).
   */
  request<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs = this.config.rpcTimeoutMs,
  ): Promise<InstanceRpc[Op]['reply']> {
    return this.requester.requestAcrossHandOver(instanceId, op, data, timeoutMs).catch((error: unknown) => this.whyNoSession(instanceId, error));
  }

  /**
   * For requests that are safe to repeat (a send: its message id is relayed at most once, whichever
   * worker gets it; see SendLedger), across a takeover: while the instance's lease is live or lapsed
   * only recently (its holder died and another worker is about to adopt it), NoSession, Fenced and the
   * new holder's NotConnected are tried again until the new holder answers, for at most
   * FAILOVER_WAIT_MS. Anything else, or an instance nobody held recently, answers at once as before.
   */
  requestAcrossTakeover<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs = this.config.rpcTimeoutMs,
  ): Promise<InstanceRpc[Op]['reply']> {
    return this.requester.requestAcrossTakeover(instanceId, op, data, timeoutMs).catch((error: unknown) => this.whyNoSession(instanceId, error));
  }

  /** Nobody holds the instance because it is hibernated: the 409 says how to wake it. Anything else is rethrown as it is. */
  private async whyNoSession(instanceId: string, error: unknown): Promise<never> {
    if (error instanceof RpcError && error.code === ErrorCode.NoSession) {
      const instance = await this.instances.findById(instanceId).catch(() => null);
      if (instance?.status === 'hibernated') throw ApiError.hibernated();
    }
    throw error;
  }

  /** Like request, but null instead of NoSession (for callers that have a fallback). */
  async requestIfHeld<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs?: number,
  ): Promise<InstanceRpc[Op]['reply'] | null> {
    try {
      return await this.requester.request(instanceId, op, data, timeoutMs ?? this.config.rpcTimeoutMs);
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

  /** Fire-and-forget broadcast to every worker. */
  restartAll(): void {
    this.bus.publish(Subjects.restartAll, { requestedAt: Date.now() });
  }
}
