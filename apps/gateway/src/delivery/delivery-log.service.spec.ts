import { maskDeliveryError } from './delivery-log.service';

describe('maskDeliveryError', () => {
  it("should mask a URL's user info and credential parameters anywhere in an error, and keep the rest", () => {
    expect(maskDeliveryError('connecting amqp://wa:broker-pass@rabbit.example:5672/vh: ECONNREFUSED')).toBe(
      'connecting amqp://wa:[masked]@rabbit.example:5672/vh: ECONNREFUSED',
    );
    const masked = maskDeliveryError('refused by the SSRF guard: http://h.example/hook?token=abc&x=1 is private');
    expect(masked).not.toContain('abc');
    expect(masked).toContain('http://h.example/hook?token=[masked]&x=1 is private');
    expect(maskDeliveryError('receiver answered 503')).toBe('receiver answered 503');
  });
});
