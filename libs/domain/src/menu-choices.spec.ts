import { ChoiceError, parseButton, parseCarousel, parseList, parsePoll, parseButtons } from './menu-choices';

describe('parseButton', () => {
  it.each([
    ['Yes', { kind: 'reply', text: 'Yes', id: 'Yes' }],
    ['Yes|y1', { kind: 'reply', text: 'Yes', id: 'y1' }],
    ['Yes\ny1', { kind: 'reply', text: 'Yes', id: 'y1' }],
    ['Code|copy:ABC123', { kind: 'copy', text: 'Code', code: 'ABC123' }],
    ['Call us|call:+5511999998888', { kind: 'call', text: 'Call us', phone: '+5511999998888' }],
    ['Site|https://example.com/x', { kind: 'url', text: 'Site', url: 'https://example.com/x' }],
    ['Site|url:https://example.com', { kind: 'url', text: 'Site', url: 'https://example.com' }],
  ])('should read %p', (choice, expected) => {
    expect(parseButton(choice)).toEqual(expected);
  });

  it('should refuse a button without text', () => {
    expect(() => parseButton('|id')).toThrow(ChoiceError);
  });
});

describe('parseList', () => {
  it('should group items under sections', () => {
    expect(parseList(['[Fruits]', 'Apple|a1|Red', 'Pear', '[Veg]', 'Kale|k|Green|leafy'])).toEqual([
      {
        title: 'Fruits',
        rows: [
          { title: 'Apple', id: 'a1', description: 'Red' },
          { title: 'Pear', id: 'Pear', description: '' },
        ],
      },
      { title: 'Veg', rows: [{ title: 'Kale', id: 'k', description: 'Green|leafy' }] },
    ]);
  });

  it('should refuse a list whose only entry is a section', () => {
    expect(() => parseList(['[Only a section]'])).toThrow(ChoiceError);
  });
});

describe('parsePoll and parseButtons', () => {
  it('should need 2 poll options and 1 button', () => {
    expect(() => parsePoll(['one'])).toThrow(ChoiceError);
    expect(parsePoll(['a', 'b'])).toEqual(['a', 'b']);
    expect(() => parseButtons([])).toThrow(ChoiceError);
  });
});

describe('parseCarousel', () => {
  it('should read cards with media and buttons', () => {
    expect(parseCarousel(['[Card one\nsub]', '{https://img/1.jpg}', 'Buy|buy1', 'Site|https://x.y', '[Card two]', 'Copy|copy:C'])).toEqual([
      {
        text: 'Card one',
        footer: 'sub',
        media: 'https://img/1.jpg',
        buttons: [
          { kind: 'reply', text: 'Buy', id: 'buy1' },
          { kind: 'url', text: 'Site', url: 'https://x.y' },
        ],
      },
      { text: 'Card two', footer: '', media: '', buttons: [{ kind: 'copy', text: 'Copy', code: 'C' }] },
    ]);
  });

  it('should refuse buttons before any card', () => {
    expect(() => parseCarousel(['Buy|b'])).toThrow(ChoiceError);
  });
});
