import { ApiError } from '../common/api-error';
import { JSON_BODY_LIMITS, parseJsonBody } from './json-body';

const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('parseJsonBody', () => {
  it('should read an empty or blank body as an empty object', () => {
    expect(parseJsonBody('')).toEqual({});
    expect(parseJsonBody('  \n')).toEqual({});
  });

  it('should read JSON, also behind a byte-order mark', () => {
    expect(parseJsonBody('{"number":"5511999990001","text":"hi 😀"}')).toEqual({ number: '5511999990001', text: 'hi 😀' });
    expect(parseJsonBody('\ufeff{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
  });

  it('should refuse malformed JSON as a 400', () => {
    expect(() => parseJsonBody('{"name":')).toThrow(new ApiError('invalid_request', 'Malformed JSON body'));
  });

  it('should refuse nesting deeper than the limit without overflowing the stack', () => {
    expect(() => parseJsonBody(nested(JSON_BODY_LIMITS.maxDepth - 1))).not.toThrow();
    expect(() => parseJsonBody(nested(5000))).toThrow(`JSON body nested deeper than ${JSON_BODY_LIMITS.maxDepth} levels`);
    expect(() => parseJsonBody('['.repeat(5000) + ']'.repeat(5000))).toThrow(/nested deeper/);
  });

  it('should refuse NUL characters, naming the field', () => {
    expect(() => parseJsonBody(JSON.stringify({ options: [{ text: 'a\u0000b' }] }))).toThrow('options[0].text must not contain NUL characters');
    expect(() => parseJsonBody(JSON.stringify({ ['k\u0000']: 1 }))).toThrow(/must not contain NUL/);
  });

  it('should refuse lone surrogates but keep surrogate pairs', () => {
    expect(() => parseJsonBody('{"text":"\\ud800x"}')).toThrow('text is not valid Unicode (lone surrogate)');
    expect(() => parseJsonBody('{"text":"x\\udfff"}')).toThrow(/lone surrogate/);
    expect(parseJsonBody('{"text":"\\ud83d\\ude00"}')).toEqual({ text: '😀' });
  });

  it('should refuse prototype pollution keys', () => {
    expect(() => parseJsonBody('{"__proto__":{"admin":true}}')).toThrow('__proto__ is not allowed');
    expect(() => parseJsonBody('{"a":{"constructor":{"prototype":{"x":1}}}}')).toThrow('a.constructor is not allowed');
    expect(parseJsonBody('{"constructor":"fine"}')).toEqual({ constructor: 'fine' });
  });
});
