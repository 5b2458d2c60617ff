import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import type { Instance } from '../lib/types';
import { Button, Card, Empty, Field, Notice, SettingsForm, useAction, useLoad } from './kit';

const PROVIDERS = ['openai', 'anthropic', 'gemini', 'deepseek', 'custom'];
const LEAD_OPERATORS = ['equals', 'not_equals', 'contains', 'not_contains', 'greater', 'less', 'empty', 'not_empty'];

interface Agent {
  id: string;
  name: string;
  provider: string;
  model: string;
  apikey: string;
  url: string;
  basePrompt: string;
  maxTokens: number;
  temperature: number;
  signMessages: boolean;
  readMessages: boolean;
  typingDelay_seconds: number;
  contextMaxMessages: number;
}

interface Trigger {
  id: string;
  active: boolean;
  type: string;
  agent_id: string;
  quickReply_id: string;
  ignoreGroups: boolean;
  lead_field: string;
  lead_operator: string;
  lead_value: string;
  priority: number;
  wordsToStart: string;
  responseDelay_seconds: number;
}

const newAgent = (): Partial<Agent> => ({
  name: '',
  provider: 'openai',
  model: 'gpt-4o-mini',
  apikey: '',
  url: '',
  basePrompt: '',
  maxTokens: 1000,
  temperature: 30,
  signMessages: false,
  readMessages: true,
  typingDelay_seconds: 2,
  contextMaxMessages: 20,
});

const newTrigger = (agentId = ''): Partial<Trigger> => ({
  active: true,
  type: 'agent',
  agent_id: agentId,
  quickReply_id: '',
  ignoreGroups: true,
  lead_field: '',
  lead_operator: 'equals',
  lead_value: '',
  priority: 0,
  wordsToStart: '',
  responseDelay_seconds: 3,
});

/** The chatbot: its switch and pauses (instance settings), AI agents and the triggers that start them (/agent/*, /trigger/*). */
export function ChatbotPanel({ instance, token, reload }: { instance: Instance; token: string; reload: () => Promise<Instance> }) {
  const agents = useLoad((signal) => api.call<Agent[]>('GET', '/agent/list', { token, signal }), [token]);
  const triggers = useLoad((signal) => api.call<Trigger[]>('GET', '/trigger/list', { token, signal }), [token]);
  const [agentDraft, setAgentDraft] = useState<Partial<Agent> | null>(null);
  const [triggerDraft, setTriggerDraft] = useState<Partial<Trigger> | null>(null);
  const saveAgent = useAction(async (draft: Partial<Agent>, remove = false) => {
    const { id, ...fields } = draft;
    const body = remove ? { id, delete: true } : { ...(id ? { id } : {}), agent: fields };
    const reply = await api.call('POST', '/agent/edit', { token, body });
    setAgentDraft(null);
    agents.reload();
    return reply;
  });
  const saveTrigger = useAction(async (draft: Partial<Trigger>, remove = false) => {
    const { id, ...fields } = draft;
    // A lead condition needs its field: without one, no operator or value is sent.
    if (!fields.lead_field) {
      delete fields.lead_operator;
      delete fields.lead_value;
    }
    const body = remove ? { id, delete: true } : { ...(id ? { id } : {}), trigger: fields };
    const reply = await api.call('POST', '/trigger/edit', { token, body });
    setTriggerDraft(null);
    triggers.reload();
    return reply;
  });
  const agentName = (id: string) => agents.data?.find((agent) => agent.id === id)?.name ?? id;

  return (
    <div class="stack">
      <ChatbotSettings instance={instance} token={token} reload={reload} />
      <Card
        title="AI agents"
        testid="agents"
        actions={
          agentDraft ? null : (
            <Button variant="primary" class="btn-small" onClick={() => setAgentDraft(newAgent())}>
              + Add agent
            </Button>
          )
        }
      >
        {agents.error ? <Notice kind="error">{agents.error}</Notice> : null}
        {agentDraft ? (
          <AgentForm draft={agentDraft} busy={saveAgent.busy} onSave={(draft) => void saveAgent.run(draft)} onCancel={() => setAgentDraft(null)} />
        ) : null}
        {!agents.data?.length && !agentDraft ? <Empty>No agent yet: an agent is a model with its prompt; a trigger decides when it answers.</Empty> : null}
        <ul class="rows">
          {(agents.data ?? []).map((agent) => (
            <li class="row-card row-line">
              <div class="grow">
                <strong>{agent.name}</strong>
                <div class="muted small">
                  {agent.provider} · {agent.model} · key {agent.apikey || 'not set'}
                </div>
              </div>
              <Button variant="ghost" class="btn-small" onClick={() => setAgentDraft(agent)}>
                Edit
              </Button>
              <Button variant="ghost" class="btn-small btn-danger-text" onClick={() => void saveAgent.run(agent, true)}>
                Delete
              </Button>
            </li>
          ))}
        </ul>
        {saveAgent.error ? <Notice kind="error">{saveAgent.error}</Notice> : null}
      </Card>
      <Card
        title="Triggers"
        testid="triggers"
        actions={
          triggerDraft ? null : (
            <Button variant="primary" class="btn-small" onClick={() => setTriggerDraft(newTrigger(agents.data?.[0]?.id))}>
              + Add trigger
            </Button>
          )
        }
      >
        {triggers.error ? <Notice kind="error">{triggers.error}</Notice> : null}
        {triggerDraft ? (
          <TriggerForm
            draft={triggerDraft}
            agents={agents.data ?? []}
            busy={saveTrigger.busy}
            onSave={(draft) => void saveTrigger.run(draft)}
            onCancel={() => setTriggerDraft(null)}
          />
        ) : null}
        {!triggers.data?.length && !triggerDraft ? <Empty>No trigger: no agent answers until a trigger says when.</Empty> : null}
        <ul class="rows">
          {[...(triggers.data ?? [])]
            .sort((a, b) => b.priority - a.priority)
            .map((trigger) => (
              <li class="row-card row-line">
                <span class={`pill ${trigger.active ? 'pill-good' : ''}`}>{trigger.active ? 'on' : 'off'}</span>
                <div class="grow">
                  <strong>{trigger.type === 'agent' ? `Agent ${agentName(trigger.agent_id)}` : `Quick reply ${trigger.quickReply_id}`}</strong>
                  <div class="muted small">
                    {trigger.wordsToStart ? `words: ${trigger.wordsToStart}` : 'any message'} · priority {trigger.priority}
                    {trigger.ignoreGroups ? ' · not in groups' : ''}
                    {trigger.lead_field ? ` · ${trigger.lead_field} ${trigger.lead_operator} ${trigger.lead_value}` : ''}
                  </div>
                </div>
                <Button variant="ghost" class="btn-small" onClick={() => setTriggerDraft(trigger)}>
                  Edit
                </Button>
                <Button variant="ghost" class="btn-small btn-danger-text" onClick={() => void saveTrigger.run(trigger, true)}>
                  Delete
                </Button>
              </li>
            ))}
        </ul>
        {saveTrigger.error ? <Notice kind="error">{saveTrigger.error}</Notice> : null}
      </Card>
    </div>
  );
}

function ChatbotSettings({ instance, token, reload }: { instance: Instance; token: string; reload: () => Promise<Instance> }) {
  const [enabled, setEnabled] = useState(instance.chatbot_enabled);
  const [ignoreGroups, setIgnoreGroups] = useState(instance.chatbot_ignoreGroups !== false);
  const [stopWord, setStopWord] = useState(String(instance.chatbot_stopConversation ?? ''));
  const [stopMinutes, setStopMinutes] = useState(String(instance.chatbot_stopMinutes ?? 0));
  const [stopWhenSent, setStopWhenSent] = useState(String(instance.chatbot_stopWhenYouSendMsg ?? 0));
  const save = useAction(async () => {
    const reply = await api.call('POST', '/instance/updatechatbotsettings', {
      token,
      body: {
        chatbot_enabled: enabled,
        chatbot_ignoreGroups: ignoreGroups,
        chatbot_stopConversation: stopWord,
        chatbot_stopMinutes: Number(stopMinutes),
        chatbot_stopWhenYouSendMsg: Number(stopWhenSent),
      },
    });
    await reload();
    return reply;
  });
  return (
    <Card title="Chatbot">
      <SettingsForm action={save}>
        <div class="field-wide checks">
          <label class="check">
            <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Chatbot on
          </label>
          <label class="check">
            <input type="checkbox" checked={ignoreGroups} onChange={(e) => setIgnoreGroups(e.currentTarget.checked)} /> Not in groups
          </label>
        </div>
        <Field label="Stop word" hint="The contact types it to pause the bot.">
          <input value={stopWord} maxLength={100} onInput={(e) => setStopWord(e.currentTarget.value)} />
        </Field>
        <Field label="Pause after the stop word (min)">
          <input type="number" min={0} value={stopMinutes} onInput={(e) => setStopMinutes(e.currentTarget.value)} />
        </Field>
        <Field label="Pause after you type on the phone (min)">
          <input type="number" min={0} value={stopWhenSent} onInput={(e) => setStopWhenSent(e.currentTarget.value)} />
        </Field>
      </SettingsForm>
    </Card>
  );
}

function AgentForm(props: { draft: Partial<Agent>; busy: boolean; onSave: (draft: Partial<Agent>) => void; onCancel: () => void }) {
  const [draft, setDraft] = useState(props.draft);
  const set = (patch: Partial<Agent>) => setDraft((before) => ({ ...before, ...patch }));
  return (
    <form
      class="form-grid row-card"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSave(draft);
      }}
    >
      <Field label="Name">
        <input name="agent-name" required value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} />
      </Field>
      <Field label="Provider">
        <select value={draft.provider} onChange={(e) => set({ provider: e.currentTarget.value })}>
          {PROVIDERS.map((value) => (
            <option value={value}>{value}</option>
          ))}
        </select>
      </Field>
      <Field label="Model">
        <input required value={draft.model} onInput={(e) => set({ model: e.currentTarget.value })} />
      </Field>
      <Field label="API key" hint={draft.id ? 'Shown masked; leave it to keep the stored key.' : undefined}>
        <input name="agent-apikey" type="password" autoComplete="off" value={draft.apikey} onInput={(e) => set({ apikey: e.currentTarget.value })} />
      </Field>
      {draft.provider === 'custom' ? (
        <Field label="Base URL" hint="An OpenAI-compatible API.">
          <input type="url" value={draft.url} onInput={(e) => set({ url: e.currentTarget.value })} />
        </Field>
      ) : null}
      <Field label="Temperature (0–100)">
        <input type="number" min={0} max={100} value={draft.temperature} onInput={(e) => set({ temperature: Number(e.currentTarget.value) })} />
      </Field>
      <Field label="Max tokens">
        <input type="number" min={1} value={draft.maxTokens} onInput={(e) => set({ maxTokens: Number(e.currentTarget.value) })} />
      </Field>
      <Field label="Prompt" wide>
        <textarea rows={5} value={draft.basePrompt} onInput={(e) => set({ basePrompt: e.currentTarget.value })} />
      </Field>
      <div class="field-wide checks">
        <label class="check">
          <input type="checkbox" checked={draft.signMessages} onChange={(e) => set({ signMessages: e.currentTarget.checked })} /> Sign messages with the agent's
          name
        </label>
        <label class="check">
          <input type="checkbox" checked={draft.readMessages} onChange={(e) => set({ readMessages: e.currentTarget.checked })} /> Mark messages read
        </label>
      </div>
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={props.busy}>
          {draft.id ? 'Save agent' : 'Add agent'}
        </Button>
        <Button variant="ghost" onClick={props.onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function TriggerForm(props: { draft: Partial<Trigger>; agents: Agent[]; busy: boolean; onSave: (draft: Partial<Trigger>) => void; onCancel: () => void }) {
  const [draft, setDraft] = useState(props.draft);
  const set = (patch: Partial<Trigger>) => setDraft((before) => ({ ...before, ...patch }));
  return (
    <form
      class="form-grid row-card"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSave(draft);
      }}
    >
      <Field label="Starts">
        <select value={draft.type} onChange={(e) => set({ type: e.currentTarget.value })}>
          <option value="agent">an AI agent</option>
          <option value="quickreply">a quick reply</option>
        </select>
      </Field>
      {draft.type === 'agent' ? (
        <Field label="Agent">
          <select value={draft.agent_id} onChange={(e) => set({ agent_id: e.currentTarget.value })}>
            <option value="">—</option>
            {props.agents.map((agent) => (
              <option value={agent.id}>{agent.name}</option>
            ))}
          </select>
        </Field>
      ) : (
        <Field label="Quick reply id">
          <input value={draft.quickReply_id} onInput={(e) => set({ quickReply_id: e.currentTarget.value })} />
        </Field>
      )}
      <Field label="Words that start it" hint="Separated by |; empty: any message.">
        <input name="trigger-words" value={draft.wordsToStart} onInput={(e) => set({ wordsToStart: e.currentTarget.value })} />
      </Field>
      <Field label="Priority" hint="Higher goes first.">
        <input type="number" value={draft.priority} onInput={(e) => set({ priority: Number(e.currentTarget.value) })} />
      </Field>
      <Field label="Wait for more messages (s)">
        <input
          type="number"
          min={0}
          max={3600}
          value={draft.responseDelay_seconds}
          onInput={(e) => set({ responseDelay_seconds: Number(e.currentTarget.value) })}
        />
      </Field>
      <Field label="Lead field" hint="Optional condition on the contact.">
        <input placeholder="lead_status" value={draft.lead_field} onInput={(e) => set({ lead_field: e.currentTarget.value })} />
      </Field>
      {draft.lead_field ? (
        <>
          <Field label="Operator">
            <select value={draft.lead_operator} onChange={(e) => set({ lead_operator: e.currentTarget.value })}>
              {LEAD_OPERATORS.map((value) => (
                <option value={value}>{value}</option>
              ))}
            </select>
          </Field>
          <Field label="Value">
            <input value={draft.lead_value} onInput={(e) => set({ lead_value: e.currentTarget.value })} />
          </Field>
        </>
      ) : null}
      <div class="field-wide checks">
        <label class="check">
          <input type="checkbox" checked={draft.active} onChange={(e) => set({ active: e.currentTarget.checked })} /> Active
        </label>
        <label class="check">
          <input type="checkbox" checked={draft.ignoreGroups} onChange={(e) => set({ ignoreGroups: e.currentTarget.checked })} /> Not in groups
        </label>
      </div>
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={props.busy}>
          {draft.id ? 'Save trigger' : 'Add trigger'}
        </Button>
        <Button variant="ghost" onClick={props.onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
