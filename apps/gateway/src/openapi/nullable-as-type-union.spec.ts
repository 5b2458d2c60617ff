import 'reflect-metadata';
import { nullableAsTypeUnion } from './openapi.document';

describe('nullableAsTypeUnion', () => {
  it("should rewrite @nestjs/swagger's OpenAPI 3.0 `nullable` as 3.1 type unions, at any depth", () => {
    // What @nestjs/swagger writes for `@ApiProperty({ nullable: true })` on a string, an enum, an integer array and a class.
    const sut = {
      type: 'object',
      properties: {
        jid: { type: 'string', nullable: true, description: 'The WhatsApp id' },
        state: { type: 'string', enum: ['open', 'closed'], nullable: true, description: 'The state' },
        counts: { type: 'array', items: { type: 'integer', nullable: true }, description: 'Counts' },
        chat: { type: 'object', nullable: true, description: 'The chat', allOf: [{ $ref: '#/components/schemas/Chat' }] },
        name: { type: 'string', description: 'Never null' },
      },
    };
    nullableAsTypeUnion(sut);
    expect(sut.properties).toEqual({
      jid: { type: ['string', 'null'], description: 'The WhatsApp id' },
      state: { type: ['string', 'null'], enum: ['open', 'closed', null], description: 'The state' },
      counts: { type: 'array', items: { type: ['integer', 'null'] }, description: 'Counts' },
      chat: { description: 'The chat', anyOf: [{ $ref: '#/components/schemas/Chat' }, { type: 'null' }] },
      name: { type: 'string', description: 'Never null' },
    });
  });
});
