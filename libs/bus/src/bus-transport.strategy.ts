import { type ArgumentsHost, Catch, type RpcExceptionFilter } from '@nestjs/common';
import { BaseRpcContext, type CustomTransportStrategy, Server } from '@nestjs/microservices';
import { isObservable, lastValueFrom, type Observable, throwError } from 'rxjs';
import type { Bus, BusSubscription } from './bus';

/** The context handlers get: the concrete subject (patterns may hold wildcards). */
export class BusContext extends BaseRpcContext<[string]> {
  getSubject(): string {
    return this.args[0];
  }
}

/**
 * Lets NestJS `@MessagePattern` / `@EventPattern` handlers run on our Bus (NATS or in-process), so the
 * same decorated handlers serve both the embedded process and separate services. A pattern's extras
 * may name a NATS queue group: `@MessagePattern(Subjects.place, { queue: 'session-workers' })`.
 */
export class BusTransportStrategy extends Server implements CustomTransportStrategy {
  private subscriptions: BusSubscription[] = [];

  constructor(private readonly bus: Bus) {
    super();
  }

  listen(callback: () => void): void {
    for (const [pattern, handler] of this.messageHandlers) {
      const queue = typeof handler.extras?.queue === 'string' ? handler.extras.queue : undefined;
      this.subscriptions.push(
        this.bus.subscribe(
          pattern,
          async (data, subject) => {
            const result: unknown = await handler(data, new BusContext([subject]));
            return isObservable(result) ? lastValueFrom(result as Observable<unknown>, { defaultValue: null }) : result;
          },
          { queue },
        ),
      );
    }
    callback();
  }

  close(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
  }

  on(): void {
    // The bus reports no transport events of its own.
  }

  unwrap<T>(): T {
    return this.bus as unknown as T;
  }
}

/**
 * Nest's default RPC filter turns every error into `{status:'error', message}`; this one lets the
 * original error through so the bus can send RpcError codes (and hide anything else) itself.
 */
@Catch()
export class PassThroughRpcFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
