import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import type { Instance, InstanceCreatedReply } from '../lib/types';
import { Button, Card, Field, Notice, useAction } from './kit';

export function CreateInstance({ admin, onCreated }: { admin: string; onCreated: (instance: Instance) => void }) {
  const [name, setName] = useState('');
  const [systemName, setSystemName] = useState('');
  const [adminField01, setAdminField01] = useState('');
  const [adminField02, setAdminField02] = useState('');
  const create = useAction(async () => {
    const body: Record<string, string> = { name: name.trim() };
    if (systemName.trim()) body.systemName = systemName.trim();
    if (adminField01) body.adminField01 = adminField01;
    if (adminField02) body.adminField02 = adminField02;
    const reply = await api.call<InstanceCreatedReply>('POST', '/instance/create', { admin, body });
    onCreated(reply.instance);
    return reply;
  });
  return (
    <div class="page">
      <h2>New instance</h2>
      <Card>
        <form
          class="form-grid"
          onSubmit={(event) => {
            event.preventDefault();
            void create.run();
          }}
        >
          <Field label="Name" hint="How you find it here and in events (instanceName).">
            <input name="name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} autoFocus />
          </Field>
          <Field label="System name" hint="Optional: shown on the phone's linked devices.">
            <input name="systemName" maxLength={64} value={systemName} onInput={(e) => setSystemName(e.currentTarget.value)} />
          </Field>
          <Field label="Admin field 1" hint="Free text only the admin sees and sets (e.g. a customer id).">
            <input name="adminField01" value={adminField01} onInput={(e) => setAdminField01(e.currentTarget.value)} />
          </Field>
          <Field label="Admin field 2">
            <input name="adminField02" value={adminField02} onInput={(e) => setAdminField02(e.currentTarget.value)} />
          </Field>
          <div class="form-actions">
            <Button type="submit" variant="primary" busy={create.busy} disabled={!name.trim()}>
              Create instance
            </Button>
          </div>
          {create.error ? <Notice kind="error">{create.error}</Notice> : null}
        </form>
      </Card>
    </div>
  );
}
