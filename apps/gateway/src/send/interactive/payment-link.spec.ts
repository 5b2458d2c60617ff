import { DEFAULT_PAYMENT_LINK_DOMAINS, parsePaymentLinkDomains, paymentLinkRefusal } from './payment-link';

describe('paymentLink domains', () => {
  const domains = ['mercadopago.com.br', 'pay.example.com'];

  it('should accept an approved domain and its subdomains', () => {
    expect(paymentLinkRefusal('https://mercadopago.com.br/checkout/1', domains)).toBe('');
    expect(paymentLinkRefusal('https://www.MercadoPago.com.br/checkout/v1?pref=1', domains)).toBe('');
    expect(paymentLinkRefusal('https://a.pay.example.com/x', domains)).toBe('');
  });

  it('should refuse other hosts, look-alikes included', () => {
    expect(paymentLinkRefusal('https://evil.com/checkout', domains)).toBe('paymentLink: evil.com is not an approved payment domain');
    expect(paymentLinkRefusal('https://mercadopago.com.br.evil.com/', domains)).toBe(
      'paymentLink: mercadopago.com.br.evil.com is not an approved payment domain',
    );
    expect(paymentLinkRefusal('https://evilmercadopago.com.br/', domains)).toBe('paymentLink: evilmercadopago.com.br is not an approved payment domain');
    expect(paymentLinkRefusal('https://example.com/', domains)).toBe('paymentLink: example.com is not an approved payment domain');
  });

  it('should refuse what is not an https URL, and credentials', () => {
    expect(paymentLinkRefusal('http://mercadopago.com.br/x', domains)).toBe('paymentLink must be an https URL');
    expect(paymentLinkRefusal('mercadopago.com.br/x', domains)).toBe('paymentLink must be an https URL');
    expect(paymentLinkRefusal('https://localhost/x', domains)).toBe('paymentLink must be an https URL');
    expect(paymentLinkRefusal('https://u:p@mercadopago.com.br/x', domains)).toBe('paymentLink must not carry credentials');
  });

  it('should read PAYMENT_LINK_DOMAINS, with the defaults when it is unset', () => {
    expect(parsePaymentLinkDomains(undefined)).toEqual([...DEFAULT_PAYMENT_LINK_DOMAINS]);
    expect(parsePaymentLinkDomains(' ')).toEqual([...DEFAULT_PAYMENT_LINK_DOMAINS]);
    expect(parsePaymentLinkDomains('Pay.Example.com, *.shop.com.br')).toEqual(['pay.example.com', 'shop.com.br']);
    expect(() => parsePaymentLinkDomains('pay.example.com,not a domain')).toThrow('"not a domain" is not a domain name');
  });
});
