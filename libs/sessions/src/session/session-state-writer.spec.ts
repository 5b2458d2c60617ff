import type { InstanceEntity } from '@gw/persistence';
import { connectionEvent, formatDisconnectTime } from './session-state-writer';

const base = { name: 'shop', owner: '5511999999999', qrcode: '', paircode: '', lastDisconnect: null, lastDisconnectReason: '' } as unknown as InstanceEntity;
const entity = (patch: Partial<InstanceEntity>) => ({ ...base, ...patch }) as InstanceEntity;

describe(connectionEvent.name, () => {
  it('should carry the QR while connecting, like the capture', () => {
    const event = connectionEvent(entity({ status: 'connecting', qrcode: 'data:image/png;base64,xx', owner: '' }), { qrcode: 'data:image/png;base64,xx' });
    expect(event).toEqual({
      EventType: 'connection',
      instance: { name: 'shop', status: 'connecting', qrcode: 'data:image/png;base64,xx' },
      instanceName: 'shop',
      owner: '',
    });
  });

  it('should carry disconnect time and reason only when this change set them', () => {
    const at = new Date('2026-02-02T17:46:57.567Z');
    const loggedOut = connectionEvent(
      entity({ status: 'disconnected', lastDisconnect: at, lastDisconnectReason: '401: logged out from another device' }),
      { lastDisconnect: at },
      'LoggedOut',
    );
    expect(loggedOut).toEqual({
      EventType: 'connection',
      instance: {
        name: 'shop',
        status: 'disconnected',
        lastDisconnect: '2026-02-02 17:46:57.567Z',
        lastDisconnectReason: '401: logged out from another device',
      },
      instanceName: 'shop',
      owner: '5511999999999',
      type: 'LoggedOut',
    });
    const connected = connectionEvent(entity({ status: 'connected', lastDisconnect: at, lastDisconnectReason: 'old' }), { status: 'connected' });
    expect(connected.instance).toEqual({ name: 'shop', status: 'connected' });
  });

  it('should format times as the captures do', () => {
    expect(formatDisconnectTime(new Date('2026-02-02T17:46:57.567Z'))).toBe('2026-02-02 17:46:57.567Z');
  });
});
