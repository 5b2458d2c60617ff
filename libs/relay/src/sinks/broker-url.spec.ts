import { maskUrlCredentials } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { checkBrokerHosts, parseBrokerUrl } from './broker-url';

describe('broker URLs', () => {
  it('parses one or several hosts, credentials, vhost and parameters, with default ports', () => {
    expect(parseBrokerUrl('rabbitmq', 'amqp://user:p%40ss@rabbit.example/%2Fprod?heartbeat=5')).toMatchObject({
      scheme: 'amqp',
      username: 'user',
      password: 'p@ss',
      hosts: [{ host: 'rabbit.example', port: 5672 }],
      path: '/prod',
    });
    expect(parseBrokerUrl('nats', 'nats://tok@n1:4223,n2,[::1]:4000').hosts).toEqual([
      { host: 'n1', port: 4223 },
      { host: 'n2', port: 4222 },
      { host: '::1', port: 4000 },
    ]);
    expect(parseBrokerUrl('rabbitmq', 'amqps://h').hosts).toEqual([{ host: 'h', port: 5671 }]);
  });

  it.each([
    ['rabbitmq', 'http://h', /amqp:\/\/ or amqps:\/\//],
    ['rabbitmq', 'amqp://a,b', /one RabbitMQ host/],
    ['nats', 'nats://h:99999', /bad port/],
    ['nats', 'nats://', /must look like/],
    ['kafka', 'kafka://bad host', /bad host/],
  ] as const)('refuses %s url %s', (kind, url, message) => {
    expect(() => parseBrokerUrl(kind, url)).toThrow(message);
  });

  it('masks passwords and lone tokens', () => {
    expect(maskUrlCredentials('amqp://guest:guest@h:5672/')).toBe('amqp://guest:***@h:5672/');
    expect(maskUrlCredentials('nats://s3cr3t@h:4222')).toBe('nats://***@h:4222');
    expect(maskUrlCredentials('kafka://h1,h2')).toBe('kafka://h1,h2');
  });

  it('lets a broker host through the SSRF guard only when allowed', async () => {
    await expect(checkBrokerHosts(new SsrfGuard(), parseBrokerUrl('rabbitmq', 'amqp://127.0.0.1'))).rejects.toThrow(
      /broker 127\.0\.0\.1:5672: .*private or reserved/,
    );
    await expect(checkBrokerHosts(new SsrfGuard(), parseBrokerUrl('nats', 'nats://8.8.8.8,10.0.0.1'))).rejects.toThrow(/10\.0\.0\.1/);
    await expect(checkBrokerHosts(SsrfGuard.fromList('127.0.0.0/8'), parseBrokerUrl('kafka', 'kafka://127.0.0.1'))).resolves.toBeUndefined();
  });
});
