import { randomBytes } from 'node:crypto';

/**
 * Random bytes for ids, drawn 4 KiB at a time: one `randomBytes` per id cost ~4% of an async
 * accept's CPU (bench/queue). Each byte is used once.
 */
const idBytes = { pool: Buffer.alloc(0), used: 0 };
function takeRandom(count: number): Buffer {
  if (idBytes.used + count > idBytes.pool.length) {
    idBytes.pool = randomBytes(4096);
    idBytes.used = 0;
  }
  idBytes.used += count;
  return idBytes.pool.subarray(idBytes.used - count, idBytes.used);
}

/** The record id and WhatsApp message id of a send, fixed when it is accepted. */
export function newMessageIds(): { recordId: string; messageId: string } {
  return { recordId: `r${takeRandom(4).toString('hex').slice(0, 7)}`, messageId: `3EB0${takeRandom(9).toString('hex').toUpperCase()}` };
}
