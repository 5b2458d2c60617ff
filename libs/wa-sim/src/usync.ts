// `<iq xmlns=usync>`: device lists, LID mapping, contact existence, status and disappearing mode.
import { jidDecode } from './baileys';
import type { Account } from './accounts';
import type { SimContext } from './context';
import type { BinaryNode } from './node-io';
import { child, children, contentString, iqResult, node } from './node-io';

function deviceListNode(account: Account): BinaryNode {
  const devices: BinaryNode[] = [node('device', { id: '0' })];
  for (const device of account.activeDevices()) {
    // Non-zero devices need key-index or Baileys drops them (signal.js extractDeviceJids).
    devices.push(node('device', { id: String(device.deviceId), 'key-index': String(device.keyIndex) }));
  }
  return node('devices', {}, [node('device-list', {}, devices)]);
}

export function handleUsync(ctx: SimContext, iq: BinaryNode): BinaryNode {
  const usync = child(iq, 'usync');
  const query = child(usync, 'query');
  const protocols = new Set(children(query).map((p) => p.tag));
  const users: BinaryNode[] = [];
  for (const user of children(child(usync, 'list'), 'user')) {
    let jid = user.attrs.jid;
    let account: Account | undefined;
    const contact = child(user, 'contact');
    if (!jid && contact) {
      const phone = (contentString(contact) ?? '').replace(/\D/g, '');
      if (!phone) continue;
      account = ctx.registry.get(phone) ?? (ctx.options.autoCreateAccounts ? ctx.registry.create(phone) : undefined);
      jid = `${phone}@s.whatsapp.net`;
    } else if (jid) {
      account = ctx.registry.resolveUser(jid);
      if (!account && ctx.options.autoCreateAccounts && jidDecode(jid)?.server === 's.whatsapp.net') {
        account = ctx.registry.create(jidDecode(jid)?.user ?? '');
      }
    }
    if (!jid) continue;
    const content: BinaryNode[] = [];
    const isLidQuery = jidDecode(jid)?.server === 'lid';
    for (const protocol of protocols) {
      switch (protocol) {
        case 'devices':
          content.push(account ? deviceListNode(account) : node('devices', {}, [node('device-list', {}, [])]));
          break;
        case 'lid':
          if (account && !isLidQuery) content.push(node('lid', { val: account.lidJid }));
          break;
        case 'contact':
          content.push(node('contact', { type: account ? 'in' : 'out' }));
          break;
        case 'status':
          content.push(node('status', { t: String(Math.floor(Date.now() / 1000)) }, account ? 'Hey there! I am using WhatsApp.' : undefined));
          break;
        case 'disappearing_mode':
          content.push(node('disappearing_mode', { duration: '0', t: '0' }));
          break;
        default:
          break;
      }
    }
    users.push(node('user', { jid }, content));
  }
  return iqResult(iq, [
    node('usync', { sid: usync?.attrs.sid, mode: usync?.attrs.mode ?? 'query', context: usync?.attrs.context ?? 'interactive', last: 'true', index: '0' }, [
      node(
        'result',
        {},
        [...protocols].map((p) => node(p, {})),
      ),
      node('list', {}, users),
    ]),
  ]);
}
