import { AcceptTokenCache, isAsyncSend, isSend } from './accept-token-cache';
import type { RequestInstance } from './request-instance';

const instance = (id: string) => ({ id, token: `t-${id}` }) as RequestInstance;

describe(AcceptTokenCache.name, () => {
  it('should keep an instance for ttlMs, then look it up again', () => {
    const cache = new AcceptTokenCache(1_000, 10);
    cache.set('t-a', instance('a'), 5_000);
    expect(cache.get('t-a', 5_999)?.id).toBe('a');
    expect(cache.get('t-a', 6_000)).toBeUndefined();
    expect(cache.get('t-a', 5_500)).toBeUndefined();
  });

  it('should hold at most maxEntries, dropping expired entries first, then the oldest', () => {
    const cache = new AcceptTokenCache(1_000, 2);
    cache.set('t-a', instance('a'), 0);
    cache.set('t-b', instance('b'), 900);
    cache.set('t-c', instance('c'), 1_500);
    expect([cache.get('t-a', 1_500), cache.get('t-b', 1_500)?.id, cache.get('t-c', 1_500)?.id]).toEqual([undefined, 'b', 'c']);
    cache.set('t-d', instance('d'), 1_600);
    expect([cache.get('t-b', 1_600), cache.get('t-c', 1_600)?.id, cache.get('t-d', 1_600)?.id]).toEqual([undefined, 'c', 'd']);
    cache.forget('t-c');
    expect(cache.get('t-c', 1_600)).toBeUndefined();
  });

  it('should apply to async sends only', () => {
    expect(isAsyncSend('POST', '/send/text', { number: '1', text: 'x', async: true })).toBe(true);
    expect(isAsyncSend('POST', '/send/text', { number: '1', text: 'x', async: 'true' })).toBe(false);
    expect(isAsyncSend('POST', '/send/text', { number: '1', text: 'x' })).toBe(false);
    expect(isAsyncSend('POST', '/instance/updateDelaySettings', { async: true })).toBe(false);
    expect(isAsyncSend('GET', '/send/text', { async: true })).toBe(false);
    expect(isAsyncSend('POST', '/send/media', null)).toBe(false);
  });

  it('should apply to every send, sync or async, and to no other route', () => {
    expect(isSend('POST', '/send/text')).toBe(true);
    expect(isSend('POST', '/send/media')).toBe(true);
    expect(isSend('GET', '/send/text')).toBe(false);
    expect(isSend('POST', '/instance/status')).toBe(false);
    expect(isSend('POST', '/sender/simple')).toBe(false);
  });
});
