import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { endSocket, postJson, provisionAndConnect, trustSimulator } from './helpers';

export interface LinkedPhone {
  running: RunningSimulator;
  /** The Baileys socket of the device linked to `owner`. */
  sock: WASocket;
  /** The LID the simulator gave `contact`. */
  contactLid: string;
}

/**
 * For one describe block: a simulator with the account `owner`, linked through a Baileys socket, and
 * the account `contact` (named Rita). Registers the suite's beforeAll (start, link) and afterAll (end
 * the socket, stop); the returned object's fields are set once beforeAll has run.
 */
export function linkedPhoneWithContact(owner: string, contact: string): LinkedPhone {
  const linked = {} as LinkedPhone;
  beforeAll(async () => {
    linked.running = await startSimulator();
    trustSimulator(linked.running);
    await postJson(linked.running, '/sim/accounts', { phone: owner });
    linked.contactLid = (await postJson<{ lid: string }>(linked.running, '/sim/accounts', { phone: contact, name: 'Rita' })).body.lid;
    linked.sock = (await provisionAndConnect(linked.running, owner)).sock;
  });
  afterAll(async () => {
    endSocket(linked.sock);
    await linked.running.stop();
  });
  return linked;
}
