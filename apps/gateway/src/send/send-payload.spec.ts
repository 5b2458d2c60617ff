import { OMITTED_MEDIA, withoutInlineMedia } from './send-payload';

const BASE64 = Buffer.alloc(3_000, 7).toString('base64');

describe('withoutInlineMedia (the stored sendPayload)', () => {
  it('should keep a text and a caption longer than any threshold', () => {
    const text = 'Olá {{name}}, '.repeat(200);
    expect(withoutInlineMedia({ number: '5511999999999', text, caption: text })).toEqual({ number: '5511999999999', text, caption: text });
  });

  it('should replace a base64 or data URI file, and keep a URL as sent', () => {
    expect(withoutInlineMedia({ type: 'image', file: BASE64, thumbnail: `data:image/jpeg;base64,${BASE64}` })).toEqual({
      type: 'image',
      file: OMITTED_MEDIA,
      thumbnail: OMITTED_MEDIA,
    });
    expect(withoutInlineMedia({ type: 'image', file: 'https://example.com/a.jpg' })).toEqual({ type: 'image', file: 'https://example.com/a.jpg' });
  });

  it('should replace even a short base64 file (the field says what it is, not its length)', () => {
    expect(withoutInlineMedia({ file: 'iVBORw0KGgo=' })).toEqual({ file: OMITTED_MEDIA });
  });

  it('should replace base64 nested in carousel cards, and keep their texts', () => {
    const payload = {
      text: 'cards',
      carousel: [
        { text: 'one', image: BASE64, buttons: [{ id: 'a', text: 'A' }] },
        { text: 'two', video: 'https://example.com/v.mp4' },
      ],
    };
    expect(withoutInlineMedia(payload)).toEqual({
      text: 'cards',
      carousel: [
        { text: 'one', image: OMITTED_MEDIA, buttons: [{ id: 'a', text: 'A' }] },
        { text: 'two', video: 'https://example.com/v.mp4' },
      ],
    });
  });

  it('should replace a base64 card image inside menu choices and keep the other choices', () => {
    const long = 'x'.repeat(2_000);
    expect(withoutInlineMedia({ type: 'carousel', choices: ['[Card]', `{${BASE64}}`, '{https://example.com/c.jpg}', `${long}|id`] })).toEqual({
      type: 'carousel',
      choices: ['[Card]', `{${OMITTED_MEDIA}}`, '{https://example.com/c.jpg}', `${long}|id`],
    });
  });

  it('should replace a base64 imageButton, payment fileUrl and link preview image', () => {
    expect(withoutInlineMedia({ imageButton: BASE64, fileUrl: `data:application/pdf;base64,${BASE64}`, linkPreviewImage: BASE64 })).toEqual({
      imageButton: OMITTED_MEDIA,
      fileUrl: OMITTED_MEDIA,
      linkPreviewImage: OMITTED_MEDIA,
    });
  });

  it('should drop undefined fields and keep numbers, booleans and null', () => {
    expect(withoutInlineMedia({ a: undefined, delay: 5, async: false, x: null })).toEqual({ delay: 5, async: false, x: null });
  });
});
