import { goDuration, newsletterJidOf, newsletterUserOf } from './newsletter.service';

describe('newsletter service helpers', () => {
  it('should write seconds as Go durations, as uazapiGO answers /newsletter/subscribe', () => {
    expect(goDuration(300)).toBe('5m0s');
    expect(goDuration(45)).toBe('45s');
    expect(goDuration(3_725)).toBe('1h2m5s');
    expect(goDuration(0)).toBe('0s');
  });

  it('should read phones and channel ids or answer 400', () => {
    expect(newsletterUserOf('+55 (11) 99999-9999')).toBe('5511999999999@s.whatsapp.net');
    expect(newsletterUserOf('123456789012345@lid')).toBe('123456789012345@lid');
    expect(() => newsletterUserOf('120363000000000000@g.us')).toThrow('Invalid phone');
    expect(newsletterJidOf({ id: '120363123456789012' })).toBe('120363123456789012@newsletter');
    expect(() => newsletterJidOf({})).toThrow('id or jid is required');
  });
});
