import { DtoValidationPipe } from '../../common/validation';
import { SendCarouselDto, SendMenuDto, SendPixButtonDto, SendRequestPaymentDto } from '../interactive/interactive.dto';
import { SendStatusDto } from '../status/status.dto';
import { ChatPresenceDto, SendContactDto, SendMediaDto, SendTextDto } from './send-common.dto';

/** The send DTOs answer the messages the endpoints answered when these rules were checked by hand. */
describe('send DTOs', () => {
  const sut = new DtoValidationPipe();
  const contact = '5511999990000';
  const errorOf = (metatype: new () => object, body: Record<string, unknown>) =>
    sut.transform(body, { type: 'body', metatype }).then(
      () => null,
      (error: Error) => error.message,
    );

  describe('SendTextDto', () => {
    it('should name a missing or blank number or text as uazapi does', async () => {
      expect(await errorOf(SendTextDto, { text: 'x' })).toBe('missing number or text');
      expect(await errorOf(SendTextDto, { number: ' ', text: 'x' })).toBe('missing number or text');
      expect(await errorOf(SendTextDto, { number: contact })).toBe('missing number or text');
      expect(await errorOf(SendTextDto, { number: contact, text: '  ' })).toBe('missing number or text');
    });

    it('should name a wrong type and an invalid number', async () => {
      expect(await errorOf(SendTextDto, { number: 5, text: 'x' })).toBe('number must be a string');
      expect(await errorOf(SendTextDto, { number: contact, text: 5 })).toBe('text must be a string');
      expect(await errorOf(SendTextDto, { number: 'abc', text: 'x' })).toMatch(/^Invalid number: /);
    });

    it('should accept a number and a text', async () => {
      expect(await errorOf(SendTextDto, { number: contact, text: 'x' })).toBeNull();
    });
  });

  describe('SendMediaDto, SendContactDto, ChatPresenceDto', () => {
    it('should name what is missing', async () => {
      expect(await errorOf(SendMediaDto, { type: 'image', file: 'https://x/y.jpg' })).toBe('missing number');
      expect(await errorOf(SendMediaDto, { number: contact, file: 'https://x/y.jpg' })).toBe(
        'type must be one of image, video, videoplay, document, audio, myaudio, ptt, ptv, sticker',
      );
      expect(await errorOf(SendMediaDto, { number: contact, type: 'gif', file: 'https://x/y.jpg' })).toMatch(/^type must be one of/);
      expect(await errorOf(SendMediaDto, { number: contact, type: 'image' })).toBe('missing file (a URL or base64)');
      expect(await errorOf(SendContactDto, { number: contact, phoneNumber: '5511999990001' })).toBe('missing fullName');
      expect(await errorOf(SendContactDto, { number: contact, fullName: 'Ana' })).toBe('missing phoneNumber');
      expect(await errorOf(ChatPresenceDto, { number: contact, presence: 'dancing' })).toBe('presence must be composing, recording or paused');
      expect(await errorOf(ChatPresenceDto, { number: contact })).toBe('presence must be composing, recording or paused');
    });
  });

  describe('interactive DTOs', () => {
    it('should name what is missing', async () => {
      expect(await errorOf(SendMenuDto, { number: contact, type: 'poll', choices: ['a', 'b'] })).toBe('missing text');
      expect(await errorOf(SendMenuDto, { number: contact, type: 'poll', text: 'x' })).toBe('missing choices');
      expect(await errorOf(SendMenuDto, { number: contact, type: 'poll', text: 'x', choices: [] })).toBe('missing choices');
      expect(await errorOf(SendMenuDto, { number: contact, type: 'poll', text: 'x', choices: 'a' })).toBe('choices must be an array of strings');
      expect(await errorOf(SendMenuDto, { number: contact, type: 'nope', text: 'x', choices: ['a'] })).toBe(
        'type must be one of button, button_legacy, list, poll, carousel',
      );
      expect(await errorOf(SendCarouselDto, { number: contact, text: 'x', carousel: [] })).toBe('missing carousel: give at least one card');
      expect(await errorOf(SendPixButtonDto, { number: contact, pixType: 'EVP' })).toBe('Missing pixKey or pixCode');
      expect(await errorOf(SendRequestPaymentDto, { number: contact, pixKey: 'k', amount: -1 })).toBe('amount must be a positive number');
      expect(await errorOf(SendRequestPaymentDto, { number: contact, pixKey: 'k', amount: '12.5' })).toBeNull();
    });
  });

  describe('SendStatusDto', () => {
    it('should answer the status rules as the sender did', async () => {
      expect(await errorOf(SendStatusDto, { text: 'x' })).toBe('type must be one of text, image, video, audio, myaudio, ptt');
      expect(await errorOf(SendStatusDto, { type: ' TEXT ', text: 'x' })).toBeNull();
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x'.repeat(657) })).toBe('text is longer than 656 characters');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', font: 3 })).toBe('Invalid font');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', font: 'bold' })).toBe('Invalid font');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', font: '2' })).toBeNull();
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', background_color: 20 })).toBe('Invalid background_color: give an integer from 1 to 19');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', recipients: 'all' })).toBe('recipients must be an array of strings');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', recipients: [1] })).toBe('recipients must be an array of strings');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', recipients: [] })).toBe('recipients is empty: omit it to send to the whole audience');
      expect(await errorOf(SendStatusDto, { type: 'text', text: 'x', max_recipients: -1 })).toBe('max_recipients must be a non-negative integer');
    });
  });
});
