import {
  applyConnectionEvent,
  choiceLines,
  countByStatus,
  DEFAULT_PROXY_FALLBACK,
  filterInstances,
  formatPhone,
  hibernationToggle,
  maskToken,
  pushEvent,
  relativeTime,
  STATUS_FILTERS,
  summarizeEvent,
} from './format';
import type { Instance, MonitorEvent } from './types';

const instance = (fields: Partial<Instance>): Instance =>
  ({
    id: 'r1',
    token: 't',
    status: 'disconnected',
    paircode: '',
    qrcode: '',
    name: 'shop',
    profileName: '',
    owner: '',
    adminField01: '',
    adminField02: '',
    ...fields,
  }) as Instance;

describe('console formatting and filtering', () => {
  it('should mask a token keeping only its ends', () => {
    const token = '123e4567-e89b-12d3-a456-426614174000';
    const masked = maskToken(token);
    expect(masked.startsWith('123e')).toBe(true);
    expect(masked.endsWith('4000')).toBe(true);
    expect(masked).not.toContain('e89b');
    expect(maskToken('short')).toBe('•••••');
    expect(maskToken('')).toBe('');
  });

  it('should filter instances by any-case search over name, id, number and profile, and by status', () => {
    const list = [
      instance({ id: 'a', name: 'Shop', status: 'connected', owner: '5511999990001', profileName: 'Loja Centro' }),
      instance({ id: 'b', name: 'support', status: 'connecting' }),
      instance({ id: 'c', name: 'billing', status: 'disconnected', adminField01: 'customer-42' }),
    ];
    expect(filterInstances(list, 'shop', 'all').map((entry) => entry.id)).toEqual(['a']);
    expect(filterInstances(list, 'CENTRO', 'all').map((entry) => entry.id)).toEqual(['a']);
    expect(filterInstances(list, '99990001', 'all').map((entry) => entry.id)).toEqual(['a']);
    expect(filterInstances(list, 'customer-42', 'all').map((entry) => entry.id)).toEqual(['c']);
    expect(filterInstances(list, '', 'connecting').map((entry) => entry.id)).toEqual(['b']);
    expect(filterInstances(list, 'shop', 'disconnected')).toEqual([]);
    expect(countByStatus(list)).toEqual({ all: 3, connected: 1, connecting: 1, hibernated: 0, disconnected: 1 });
  });

  it('should show hibernated (uazapi 2.1.1) as a state of its own: filter, counts, and the Hibernate / Wake toggle', () => {
    const list = [
      instance({ id: 'a', name: 'shop', status: 'connected' }),
      instance({ id: 'b', name: 'sleepy', status: 'hibernated', qrcode: '' }),
      instance({ id: 'c', name: 'billing', status: 'disconnected' }),
      instance({ id: 'd', name: 'night', status: 'hibernated' }),
    ];
    expect(STATUS_FILTERS).toContain('hibernated');
    expect(filterInstances(list, '', 'hibernated').map((entry) => entry.id)).toEqual(['b', 'd']);
    expect(filterInstances(list, 'sleepy', 'hibernated').map((entry) => entry.id)).toEqual(['b']);
    expect(filterInstances(list, '', 'disconnected').map((entry) => entry.id)).toEqual(['c']);
    expect(countByStatus(list)).toEqual({ all: 4, connected: 1, connecting: 0, hibernated: 2, disconnected: 1 });
    expect(hibernationToggle('connected')).toEqual({ label: 'Hibernate', path: '/instance/hibernate' });
    expect(hibernationToggle('hibernated')).toEqual({ label: 'Wake', path: '/instance/connect' });
    for (const status of ['connecting', 'disconnected', '']) expect(hibernationToggle(status)).toBeUndefined();
    // A hibernate event clears any code; waking goes through connecting without a QR code.
    const slept = applyConnectionEvent(list[0], { instance: { status: 'hibernated', lastDisconnectReason: 'hibernated by request' } });
    expect([slept.status, slept.qrcode, slept.lastDisconnectReason]).toEqual(['hibernated', '', 'hibernated by request']);
    expect(summarizeEvent({ type: 'connection', data: { instance: { status: 'hibernated' } } })).toBe('hibernated');
    // uazapi 2.1.1's name of the managed-pool fallback.
    expect(DEFAULT_PROXY_FALLBACK).toBe('internal');
  });

  it('should follow connection events: each new QR, the pairing code, then connected without codes, or the disconnect reason', () => {
    const start = instance({ status: 'disconnected' });
    const qr = applyConnectionEvent(start, { instance: { status: 'connecting', qrcode: 'data:image/png;base64,AA' } });
    expect([qr.status, qr.qrcode]).toEqual(['connecting', 'data:image/png;base64,AA']);
    const rotated = applyConnectionEvent(qr, { instance: { status: 'connecting', qrcode: 'data:image/png;base64,BB' } });
    expect(rotated.qrcode).toBe('data:image/png;base64,BB');
    const connected = applyConnectionEvent(rotated, { instance: { status: 'connected', owner: '5511999990001' } });
    expect([connected.status, connected.qrcode, connected.owner]).toEqual(['connected', '', '5511999990001']);
    const dropped = applyConnectionEvent(connected, {
      instance: { status: 'disconnected', lastDisconnect: '2026-01-01T00:00:00.000Z', lastDisconnectReason: 'logged out' },
    });
    expect([dropped.status, dropped.lastDisconnectReason, dropped.owner]).toEqual(['disconnected', 'logged out', '5511999990001']);
    // An event without an instance changes nothing.
    expect(applyConnectionEvent(connected, {})).toEqual(connected);
  });

  it('should summarise events in one line', () => {
    expect(summarizeEvent({ type: 'connection', data: { instance: { status: 'connecting', qrcode: 'x' } } })).toBe('connecting (new QR code)');
    expect(summarizeEvent({ type: 'connection', data: { instance: { status: 'disconnected', lastDisconnectReason: 'logged out' } } })).toBe(
      'disconnected (logged out)',
    );
    expect(summarizeEvent({ type: 'messages', data: { message: { fromMe: true, chatid: '5521999990002@s.whatsapp.net', text: 'Hi' } } })).toBe(
      '→ 5521999990002: Hi',
    );
    expect(summarizeEvent({ type: 'messages', data: { message: { fromMe: false, senderName: 'Ana', text: 'Olá' } } })).toBe('← Ana: Olá');
    expect(summarizeEvent({ type: 'groups', data: {} })).toBe('groups');
  });

  it('should keep the newest events first, once each, up to the limit', () => {
    const event = (id: string): MonitorEvent => ({ id, type: 'messages', receivedAt: 0, data: {} });
    let list: MonitorEvent[] = [];
    for (const id of ['1', '2', '3', '3']) list = pushEvent(list, event(id), 2);
    expect(list.map((entry) => entry.id)).toEqual(['3', '2']);
  });

  it('should format numbers, times and choice lines', () => {
    expect(formatPhone('5511999990001')).toBe('+55 11 99999-0001');
    expect(formatPhone('5511999990001@s.whatsapp.net')).toBe('+55 11 99999-0001');
    expect(formatPhone('14155550100')).toBe('+14155550100');
    expect(formatPhone('')).toBe('');
    const now = Date.parse('2026-01-01T12:00:00.000Z');
    expect(relativeTime('2026-01-01T11:59:50.000Z', now)).toBe('just now');
    expect(relativeTime('2026-01-01T11:30:00.000Z', now)).toBe('30 min ago');
    expect(relativeTime('2026-01-01T09:00:00.000Z', now)).toBe('3 h ago');
    expect(relativeTime('', now)).toBe('');
    expect(relativeTime('nonsense', now)).toBe('');
    expect(choiceLines(' Yes \n\nNo|no\n')).toEqual(['Yes', 'No|no']);
  });
});
