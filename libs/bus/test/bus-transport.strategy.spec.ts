import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload, type MicroserviceOptions } from '@nestjs/microservices';
import { ErrorCode, RpcError } from '@gw/contracts';
import { BusContext, BusTransportStrategy, PassThroughRpcFilter } from '../src/bus-transport.strategy';
import { InProcessBus } from '../src/in-process-bus';

const events: unknown[] = [];

@Controller()
class EchoController {
  @MessagePattern('echo.*')
  echo(@Payload() data: { text: string }, @Ctx() context: BusContext) {
    return { text: data.text, subject: context.getSubject() };
  }

  @MessagePattern('fail.coded')
  failCoded() {
    throw new RpcError(ErrorCode.Conflict, 'already held');
  }

  @MessagePattern('fail.bug')
  failBug() {
    throw new Error('secret internals');
  }

  @EventPattern('note')
  note(@Payload() data: unknown) {
    events.push(data);
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

describe(BusTransportStrategy.name, () => {
  const bus = new InProcessBus();
  let close: () => Promise<void>;

  beforeAll(async () => {
    const app = await NestFactory.createMicroservice<MicroserviceOptions>(EchoModule, { strategy: new BusTransportStrategy(bus), logger: false });
    app.useGlobalFilters(new PassThroughRpcFilter());
    await app.listen();
    close = () => app.close();
  });
  afterAll(() => close());

  it('should route a request to a decorated handler and reply', async () => {
    await expect(bus.request('echo.one', { text: 'hi' }, { timeoutMs: 1000 })).resolves.toEqual({ text: 'hi', subject: 'echo.one' });
  });

  it('should carry an RpcError code back to the caller', async () => {
    await expect(bus.request('fail.coded', {}, { timeoutMs: 1000 })).rejects.toMatchObject({ code: ErrorCode.Conflict, message: 'already held' });
  });

  it('should hide internals of unexpected errors', async () => {
    await expect(bus.request('fail.bug', {}, { timeoutMs: 1000 })).rejects.toMatchObject({ code: ErrorCode.Internal, message: 'internal error' });
  });

  it('should deliver events', async () => {
    bus.publish('note', { n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual([{ n: 1 }]);
  });
});
