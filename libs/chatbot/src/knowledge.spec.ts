import { deflateSync } from 'node:zlib';
import { chunkText, csvToText, htmlToText, localEmbedding, pdfToText } from './knowledge';

describe('knowledge', () => {
  it('chunks text with overlap at word ends', () => {
    const text = Array.from({ length: 300 }, (_, i) => `palavra${i}`).join(' ');
    const chunks = chunkText(text, 200, 40);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((chunk) => chunk.length <= 200)).toBe(true);
    expect(chunks.every((chunk) => /^palavra\d+/.test(chunk))).toBe(true);
    // Every word is in some chunk.
    for (const i of [0, 150, 299]) expect(chunks.some((chunk) => chunk.split(' ').includes(`palavra${i}`))).toBe(true);
  });

  it('reads html, csv and text PDFs', () => {
    expect(htmlToText('<html><style>x{}</style><h1>Horário</h1><p>9h &amp; 18h&nbsp;— seg&#224;sex</p><script>evil()</script>')).toBe(
      'Horário\n 9h & 18h — segàsex',
    );
    expect(csvToText('produto;preço\n"camisa; azul";50\ncalça;80\n')).toBe('produto: camisa; azul; preço: 50\n\nproduto: calça; preço: 80');
    const stream = deflateSync(Buffer.from('BT /F1 12 Tf 72 712 Td (Entrega em tr\\352s dias) Tj T* [(Trocas ) -300 (em 30 dias)] TJ ET', 'latin1'));
    const pdf = Buffer.concat([
      Buffer.from('%PDF-1.4\n1 0 obj << /Length ' + stream.length + ' /Filter /FlateDecode >>\nstream\n', 'latin1'),
      stream,
      Buffer.from('\nendstream\nendobj\n%%EOF', 'latin1'),
    ]);
    expect(pdfToText(pdf)).toBe('Entrega em três dias\nTrocas  em 30 dias');
  });

  it('the local embedding puts texts that share words close, others far', () => {
    const dot = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i], 0);
    const question = localEmbedding('Quanto custa a entrega para o Rio?');
    const delivery = localEmbedding('A entrega para o Rio de Janeiro custa dez reais.');
    const returns = localEmbedding('Trocas em até trinta dias com nota fiscal.');
    expect(dot(question, question)).toBeCloseTo(1, 6);
    expect(dot(question, delivery)).toBeGreaterThan(dot(question, returns) + 0.2);
  });
});
