import { rabbitMqOptions, rabbitMqPublication } from './rabbitmq.transport';

describe('RabbitMQ mapping', () => {
  it('publishes persistent JSON with the stable id as messageId and the routing key filled in', () => {
    const publication = rabbitMqPublication(rabbitMqOptions({ exchange: 'x', routingKey: 'wa.{instanceName}.{event}' }), {
      id: 'evt_9',
      event: { id: '9', instanceId: 'i1', eventType: 'messages', chatId: '', payload: { instanceName: 'shop' } },
      body: '{}',
    });
    expect(publication).toMatchObject({
      exchange: 'x',
      routingKey: 'wa.shop.messages',
      properties: { persistent: true, messageId: 'evt_9', contentType: 'application/json', type: 'messages', headers: { instanceId: 'i1', event: 'messages' } },
    });
    expect(rabbitMqOptions({})).toEqual({ exchange: 'wa-gateway', exchangeType: 'topic', routingKey: '{instance}.{event}' });
  });
});
