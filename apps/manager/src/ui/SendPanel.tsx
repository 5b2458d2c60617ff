import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { choiceLines } from '../lib/format';
import type { SimPhone } from '../lib/types';
import { Button, Card, Field, JsonView, Notice, useAction, useLoad } from './kit';

type Kind = 'text' | 'media' | 'contact' | 'location' | 'menu' | 'any';

const MEDIA_TYPES = ['image', 'video', 'document', 'audio', 'ptt', 'ptv', 'sticker', 'videoplay', 'myaudio'];
const MENU_TYPES = ['button', 'list', 'poll', 'carousel'];

function readFile(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** POST /send/* routes of the API document, with an example body each (for "Any endpoint"). */
async function sendRoutes(): Promise<Array<{ path: string; example: unknown }>> {
  const document = await api.call<{
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { example?: unknown; schema?: unknown }> } }>>;
  }>('GET', '/openapi.json');
  return Object.entries(document.paths)
    .filter(([path, item]) => (path.startsWith('/send/') || path.startsWith('/message/')) && item.post)
    .map(([path, item]) => ({ path, example: item.post.requestBody?.content?.['application/json']?.example ?? { number: '' } }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** Sends a test message of any kind through the API, as the instance, and shows the answer. */
export function SendPanel({ token, sandbox }: { token: string; sandbox?: boolean }) {
  // In the sandbox, the simulator's phones are the numbers to try.
  const phones = useLoad(
    (signal) => (sandbox ? api.call<SimPhone[]>('GET', '/sandbox/sim/accounts', { token, signal }) : Promise.resolve([] as SimPhone[])),
    [token, sandbox],
  );
  const [kind, setKind] = useState<Kind>('text');
  const [number, setNumber] = useState('');
  const [text, setText] = useState('Hello from the console');
  const [mediaType, setMediaType] = useState('image');
  const [file, setFile] = useState('');
  const [fileName, setFileName] = useState('');
  const [fullName, setFullName] = useState('');
  const [phoneNumber, setPhoneNumber] = useState('');
  const [latitude, setLatitude] = useState('-23.5505');
  const [longitude, setLongitude] = useState('-46.6333');
  const [place, setPlace] = useState('');
  const [menuType, setMenuType] = useState('poll');
  const [choices, setChoices] = useState('Yes\nNo');
  const [footer, setFooter] = useState('');
  const [delay, setDelay] = useState('');
  const [asyncSend, setAsyncSend] = useState(false);
  const [routes, setRoutes] = useState<Array<{ path: string; example: unknown }>>([]);
  const [route, setRoute] = useState('/send/text');
  const [raw, setRaw] = useState('');

  useEffect(() => {
    if (kind !== 'any' || routes.length) return;
    void sendRoutes()
      .then((list) => {
        setRoutes(list);
        const first = list.find((entry) => entry.path === route) ?? list[0];
        if (first) {
          setRoute(first.path);
          setRaw(JSON.stringify(first.example, null, 2));
        }
      })
      .catch(() => setRoutes([]));
  }, [kind]);

  const send = useAction(async () => {
    const common: Record<string, unknown> = {};
    if (delay.trim()) common.delay = Number(delay);
    if (asyncSend) common.async = true;
    const digits = number.trim();
    switch (kind) {
      case 'text':
        return api.call('POST', '/send/text', { token, body: { number: digits, text, ...common } });
      case 'media':
        return api.call('POST', '/send/media', {
          token,
          body: {
            number: digits,
            type: mediaType,
            file,
            ...(text ? { text } : {}),
            ...(fileName && mediaType === 'document' ? { docName: fileName } : {}),
            ...common,
          },
        });
      case 'contact':
        return api.call('POST', '/send/contact', { token, body: { number: digits, fullName, phoneNumber, ...common } });
      case 'location':
        return api.call('POST', '/send/location', {
          token,
          body: { number: digits, latitude: Number(latitude), longitude: Number(longitude), ...(place ? { name: place } : {}), ...common },
        });
      case 'menu':
        return api.call('POST', '/send/menu', {
          token,
          body: { number: digits, type: menuType, text, choices: choiceLines(choices), ...(footer ? { footerText: footer } : {}), ...common },
        });
      case 'any': {
        let body: unknown;
        try {
          body = JSON.parse(raw || '{}');
        } catch (error) {
          throw new Error(`The body is not JSON: ${(error as Error).message}`);
        }
        return api.call('POST', route, { token, body });
      }
    }
  });

  return (
    <div class="grid-2">
      <Card title="Send a test message" testid="send">
        <div class="segmented" role="group">
          {(
            [
              ['text', 'Text'],
              ['media', 'Media'],
              ['contact', 'Contact'],
              ['location', 'Location'],
              ['menu', 'Buttons / list / poll'],
              ['any', 'Any endpoint'],
            ] as Array<[Kind, string]>
          ).map(([value, label]) => (
            <button type="button" class={kind === value ? 'seg-on' : ''} onClick={() => setKind(value)}>
              {label}
            </button>
          ))}
        </div>
        <form
          class="form-grid"
          onSubmit={(event) => {
            event.preventDefault();
            void send.run();
          }}
        >
          {kind === 'any' ? (
            <>
              <Field label="Endpoint" wide>
                <select
                  value={route}
                  onChange={(e) => {
                    const path = e.currentTarget.value;
                    setRoute(path);
                    setRaw(JSON.stringify(routes.find((entry) => entry.path === path)?.example ?? {}, null, 2));
                  }}
                >
                  {routes.map((entry) => (
                    <option value={entry.path}>POST {entry.path}</option>
                  ))}
                </select>
              </Field>
              <Field label="Body (JSON)" hint="Prefilled with the API document's example: change the number." wide>
                <textarea class="code" rows={12} spellcheck={false} value={raw} onInput={(e) => setRaw(e.currentTarget.value)} />
              </Field>
            </>
          ) : (
            <Field label="To" hint="A phone number with country code (digits), a JID or a group JID.">
              <input name="number" list="send-numbers" required value={number} onInput={(e) => setNumber(e.currentTarget.value)} placeholder="5511999999999" />
              <datalist id="send-numbers">
                {(phones.data ?? []).map((phone) => (
                  <option value={phone.phone}>{phone.name}</option>
                ))}
              </datalist>
            </Field>
          )}
          {kind === 'media' ? (
            <>
              <Field label="Type">
                <select value={mediaType} onChange={(e) => setMediaType(e.currentTarget.value)}>
                  {MEDIA_TYPES.map((value) => (
                    <option value={value}>{value}</option>
                  ))}
                </select>
              </Field>
              <Field label="File" hint="Pick a file (sent as base64) or paste an https URL." wide>
                <input
                  type="file"
                  onChange={(e) => {
                    const picked = e.currentTarget.files?.[0];
                    if (!picked) return;
                    setFileName(picked.name);
                    void readFile(picked).then(setFile);
                  }}
                />
                <input placeholder="https://…" value={file.startsWith('data:') ? `(${fileName})` : file} onInput={(e) => setFile(e.currentTarget.value)} />
              </Field>
            </>
          ) : null}
          {kind === 'contact' ? (
            <>
              <Field label="Contact's name">
                <input required value={fullName} onInput={(e) => setFullName(e.currentTarget.value)} />
              </Field>
              <Field label="Contact's numbers" hint="Comma separated.">
                <input required value={phoneNumber} onInput={(e) => setPhoneNumber(e.currentTarget.value)} />
              </Field>
            </>
          ) : null}
          {kind === 'location' ? (
            <>
              <Field label="Latitude">
                <input required value={latitude} onInput={(e) => setLatitude(e.currentTarget.value)} />
              </Field>
              <Field label="Longitude">
                <input required value={longitude} onInput={(e) => setLongitude(e.currentTarget.value)} />
              </Field>
              <Field label="Place name">
                <input value={place} onInput={(e) => setPlace(e.currentTarget.value)} />
              </Field>
            </>
          ) : null}
          {kind === 'menu' ? (
            <>
              <Field label="Kind">
                <select value={menuType} onChange={(e) => setMenuType(e.currentTarget.value)}>
                  {MENU_TYPES.map((value) => (
                    <option value={value}>{value}</option>
                  ))}
                </select>
              </Field>
              <Field label="Choices" hint="One per line. Buttons: text|id or text|https://…; lists: [Section] lines, then text|id|description." wide>
                <textarea rows={5} value={choices} onInput={(e) => setChoices(e.currentTarget.value)} />
              </Field>
              <Field label="Footer">
                <input value={footer} onInput={(e) => setFooter(e.currentTarget.value)} />
              </Field>
            </>
          ) : null}
          {kind === 'text' || kind === 'media' || kind === 'menu' ? (
            <Field label={kind === 'media' ? 'Caption' : 'Text'} wide>
              <textarea name="text" rows={3} required={kind !== 'media'} value={text} onInput={(e) => setText(e.currentTarget.value)} />
            </Field>
          ) : null}
          {kind !== 'any' ? (
            <>
              <Field label="Delay (ms)" hint="Shows “typing…” first.">
                <input type="number" min={0} max={300000} value={delay} onInput={(e) => setDelay(e.currentTarget.value)} />
              </Field>
              <label class="check">
                <input type="checkbox" checked={asyncSend} onChange={(e) => setAsyncSend(e.currentTarget.checked)} /> Queue it (async)
              </label>
            </>
          ) : null}
          <div class="form-actions">
            <Button type="submit" variant="primary" busy={send.busy} data-testid="send-button">
              Send
            </Button>
          </div>
        </form>
        {send.error ? <Notice kind="error">{send.error}</Notice> : null}
      </Card>
      <Card title="Answer">
        {send.result !== undefined ? (
          <div data-testid="send-result">
            <Notice kind="success">
              Sent{(send.result as { messageid?: string })?.messageid ? `: ${(send.result as { messageid: string }).messageid}` : ''}
            </Notice>
            <JsonView value={send.result} />
          </div>
        ) : (
          <p class="muted">The API's answer shows here.</p>
        )}
      </Card>
    </div>
  );
}
