import type { WaMessageLimitsReply } from '@gw/contracts';
import { limitsView } from './instance-runtime.service';

const capping = (over: Partial<NonNullable<WaMessageLimitsReply['capping']>> = {}): NonNullable<WaMessageLimitsReply['capping']> => ({
  status: 'NONE',
  usedQuota: 3,
  totalQuota: 1000,
  cycleStart: '',
  cycleEnd: '2026-12-01T00:00:00.000Z',
  serverSentAt: '',
  oteStatus: 'NOT_ELIGIBLE',
  mvStatus: 'NOT_ACTIVE',
  ...over,
});
const free = { active: false, until: '', enforcementType: 'DEFAULT' };

describe('limitsView', () => {
  it('should say new chats may start when both answers show no restriction', () => {
    const sut = limitsView({ capping: capping(), cappingError: '', timelock: free, timelockError: '' });
    expect(sut).toMatchObject({
      reachable: true,
      can_send_new_messages: true,
      new_chat_message_capping: { available: true, cycle_end: '2026-12-01T00:00:00.000Z' },
    });
    expect(sut).not.toHaveProperty('error_key');
    expect(sut.new_chat_message_capping).not.toHaveProperty('cycle_start');
  });

  it('should put the time lock first, and count a used-up quota as capped whatever its status says', () => {
    const locked = limitsView({ capping: capping({ status: 'CAPPED' }), cappingError: '', timelock: { ...free, active: true }, timelockError: '' });
    expect(locked).toMatchObject({ can_send_new_messages: false, error_key: 'WHATSAPP_REACHOUT_TIMELOCK' });
    const used = limitsView({ capping: capping({ usedQuota: 1000 }), cappingError: '', timelock: free, timelockError: '' });
    expect(used).toMatchObject({ can_send_new_messages: false, error_key: 'WHATSAPP_NEW_CHAT_MESSAGE_CAPPING' });
  });

  it('should mark an unanswered query unavailable with its lookup error, and not guess (null) when nothing restricts', () => {
    const half = limitsView({ capping: null, cappingError: 'GraphQL server error', timelock: free, timelockError: '' });
    expect(half).toMatchObject({
      reachable: true,
      can_send_new_messages: null,
      new_chat_message_capping: { available: false, lookup_error: 'GraphQL server error' },
    });
    const none = limitsView({ capping: null, cappingError: 'x', timelock: null, timelockError: 'y' });
    expect(none).toMatchObject({ reachable: false, can_send_new_messages: null, reachout_timelock: { available: false, lookup_error: 'y' } });
  });

  it('should show a stored limit in place of a query that failed, saying it is the stored one, and never one WhatsApp answered about', () => {
    const until = new Date('2026-12-02T05:00:00.000Z');
    const stored = [
      { kind: 'new_chat_cap' as const, until, detail: '5/5' },
      { kind: 'reachout_timelock' as const, until, detail: 'BIZ_QUALITY' },
    ];
    const capped = limitsView({ capping: null, cappingError: 'GraphQL server error', timelock: free, timelockError: '' }, stored);
    expect(capped).toMatchObject({
      can_send_new_messages: false,
      error_key: 'WHATSAPP_NEW_CHAT_MESSAGE_CAPPING',
      new_chat_message_capping: {
        available: false,
        lookup_error: 'GraphQL server error',
        status: 'CAPPED',
        used_quota: 5,
        total_quota: 5,
        cycle_end: until.toISOString(),
        source: 'stored',
      },
      reachout_timelock: { available: true, active: false },
    });
    expect(capped.provider_message).toContain('5 of 5');
    const locked = limitsView({ capping: null, cappingError: 'x', timelock: null, timelockError: 'y' }, stored.slice(1));
    expect(locked).toMatchObject({
      reachable: false,
      can_send_new_messages: false,
      error_key: 'WHATSAPP_REACHOUT_TIMELOCK',
      reachout_timelock: { available: false, lookup_error: 'y', active: true, until: until.toISOString(), enforcement_type: 'BIZ_QUALITY', source: 'stored' },
    });
    expect(locked.new_chat_message_capping).toEqual({ available: false, lookup_error: 'x' });
  });
});
