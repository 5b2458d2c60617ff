import { natsServerOptions } from './nats-options';

describe('natsServerOptions', () => {
  it('should pass every server of a comma-separated list, without its credentials', () => {
    expect(natsServerOptions('nats://gw:s%2Fecret@127.0.0.1:4222, nats://gw:s%2Fecret@127.0.0.1:4223,nats://gw:s%2Fecret@10.0.0.3:4222')).toEqual({
      servers: ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4223', 'nats://10.0.0.3:4222'],
      user: 'gw',
      pass: 's/ecret',
    });
  });

  it('should take a user alone as a token', () => {
    expect(natsServerOptions('tls://t0ken@nats.example:4222')).toEqual({ servers: ['tls://nats.example:4222'], token: 't0ken' });
  });

  it('should take the credentials from any server that carries them', () => {
    expect(natsServerOptions('nats://a:4222,nats://u:p@b:4222')).toEqual({ servers: ['nats://a:4222', 'nats://b:4222'], user: 'u', pass: 'p' });
  });

  it('should leave a URL without credentials as it was', () => {
    expect(natsServerOptions('nats://127.0.0.1:4222')).toEqual({ servers: ['nats://127.0.0.1:4222'] });
  });

  it('should refuse servers with different credentials, and an empty list', () => {
    expect(() => natsServerOptions('nats://a:1@h:4222,nats://b:2@h:4223')).toThrow(/same credentials/);
    expect(() => natsServerOptions(' , ')).toThrow(/no server/);
  });
});
