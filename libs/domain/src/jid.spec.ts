import { formatPhone, jidUser, normalizeUserJid, parseChatTarget, phoneDigits } from './jid';

describe('parseChatTarget', () => {
  it.each([
    ['5511999998888', '5511999998888@s.whatsapp.net', 'user'],
    ['+55 (11) 99999-8888', '5511999998888@s.whatsapp.net', 'user'],
    ['5511999998888@s.whatsapp.net', '5511999998888@s.whatsapp.net', 'user'],
    ['5511999998888:12@s.whatsapp.net', '5511999998888@s.whatsapp.net', 'user'],
    ['120363025246125244@g.us', '120363025246125244@g.us', 'group'],
    ['5511999998888-1614623223@g.us', '5511999998888-1614623223@g.us', 'group'],
    ['551190000000005@lid', '551190000000005@lid', 'lid'],
    ['120363401234567890@newsletter', '120363401234567890@newsletter', 'newsletter'],
  ])('should read %s', (input, jid, kind) => {
    expect(parseChatTarget(input)).toEqual({ jid, kind });
  });

  it.each(['', 'abc', '123', '5511@x.com', '@g.us', 'abc@g.us', '1234567890123456'])('should refuse %p', (input) => {
    expect(parseChatTarget(input)).toBeNull();
  });
});

describe('phoneDigits', () => {
  it('should strip the usual punctuation', () => {
    expect(phoneDigits('+1 (415) 555-0100')).toBe('14155550100');
  });

  it('should refuse letters', () => {
    expect(phoneDigits('55abc11')).toBeNull();
  });
});

describe('jid helpers', () => {
  it('should drop the device', () => {
    expect(jidUser('5511:3@s.whatsapp.net')).toBe('5511');
    expect(normalizeUserJid('5511:3@s.whatsapp.net')).toBe('5511@s.whatsapp.net');
  });

  it('should format Brazilian numbers like the captures', () => {
    expect(formatPhone('5511900000000')).toBe('+55 11 90000-0000');
    expect(formatPhone('14155550100')).toBe('+14155550100');
  });
});
