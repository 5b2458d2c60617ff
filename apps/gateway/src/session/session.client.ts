import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ErrorCode, type InstanceOp, type InstanceRpc, type PlaceRequest, RpcError, Subjects, type ConnectReply } from '@gw/contracts';
import { BUS, GATEWAY_CONFIG } from '../runtime/tokens';
import type { GatewayConfig } from '../runtime/gateway-config';

const PLACE_ATTEMPTS = 4;

/** Typed requests from the gateway to whichever session worker holds an instance. */
@Injectable()
export class SessionClient {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** Asks the holder; RpcError(NoSession) at once when no worker holds the instance. */
  request<Op extends InstanceOp>(
    instanceId: string,
    op: Op,
    data: InstanceRpc[Op]['request'],
    timeoutMs = this.config.rpcTimeoutMs,
  ): Promise<InstanceRpc[Op]['reply']> {
    return this.bus.request<InstanceRpc[Op]['reply']>(Subjects.instance(instanceId, op), data, { timeoutMs });
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

  /** Fire-and-forget broadcast to every worker. */
  restartAll(): void {
    this.bus.publish(Subjects.restartAll, { requestedAt: Date.now() });
  }
}
