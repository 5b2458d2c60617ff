import { Curve, encodeBinaryNode, proto, WA_CERT_DETAILS, makeWASocket } from '@whiskeysockets/baileys';
it('loads', () => {
  expect(typeof Curve.generateKeyPair).toBe('function');
  expect(typeof makeWASocket).toBe('function');
  expect(WA_CERT_DETAILS.SERIAL).toBe(0);
  expect(encodeBinaryNode({tag:'iq',attrs:{}}).length).toBeGreaterThan(0);
  expect(proto.Message).toBeDefined();
});
