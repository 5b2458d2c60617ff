/**
 * The `choices` syntax of `/send/menu` and `/send/carousel` (uazapi-notes §4), parsed into plain data
 * that the message builders turn into WAProto.
 */
export type MenuButton =
  | { kind: 'reply'; text: string; id: string }
  | { kind: 'copy'; text: string; code: string }
  | { kind: 'call'; text: string; phone: string }
  | { kind: 'url'; text: string; url: string };

export interface ListRow {
  title: string;
  id: string;
  description: string;
}

export interface ListSection {
  title: string;
  rows: ListRow[];
}

export interface CarouselCard {
  text: string;
  footer: string;
  /** URL or base64 of the card's image ('' when none). */
  media: string;
  buttons: MenuButton[];
}

export class ChoiceError extends Error {}

/** `text|id`, `text\nid`, `text`, `text|copy:CODE`, `text|call:+55…`, `text|https://…`, `text|url:https://…`. */
export function parseButton(choice: string): MenuButton {
  const raw = choice.trim();
  if (!raw) throw new ChoiceError('empty button choice');
  const separator = raw.includes('|') ? '|' : raw.includes('\n') ? '\n' : null;
  if (!separator) return { kind: 'reply', text: raw, id: raw };
  const index = raw.indexOf(separator);
  const text = raw.slice(0, index).trim();
  const value = raw.slice(index + 1).trim();
  if (!text) throw new ChoiceError(`button "${raw}" has no text`);
  if (/^copy:/i.test(value)) return { kind: 'copy', text, code: value.slice(5) };
  if (/^call:/i.test(value)) return { kind: 'call', text, phone: value.slice(5) };
  if (/^url:/i.test(value)) return { kind: 'url', text, url: value.slice(4) };
  if (/^https?:\/\//i.test(value)) return { kind: 'url', text, url: value };
  return { kind: 'reply', text, id: value || text };
}

/** `[Section]` starts a section; items are `label|id|description` (id and description optional). */
export function parseList(choices: string[]): ListSection[] {
  const sections: ListSection[] = [];
  for (const choice of choices) {
    const raw = choice.trim();
    if (!raw) continue;
    const header = /^\[(.*)\]$/s.exec(raw);
    if (header) {
      sections.push({ title: header[1].trim(), rows: [] });
      continue;
    }
    if (sections.length === 0) sections.push({ title: '', rows: [] });
    const [title, id, ...description] = raw.split('|').map((part) => part.trim());
    if (!title) throw new ChoiceError(`list item "${raw}" has no label`);
    sections[sections.length - 1].rows.push({ title, id: id || title, description: description.join('|') });
  }
  const nonEmpty = sections.filter((section) => section.rows.length > 0);
  if (nonEmpty.length === 0) throw new ChoiceError('a list needs at least one item (a [section] alone does not count)');
  return nonEmpty;
}

/** Poll options: plain strings, at least 2, unique. */
export function parsePoll(choices: string[]): string[] {
  const options = choices.map((choice) => choice.trim()).filter(Boolean);
  if (options.length < 2) throw new ChoiceError('a poll needs at least 2 options');
  if (new Set(options).size !== options.length) throw new ChoiceError('poll options must be unique');
  return options;
}

/** Buttons of a button menu: at least one. */
export function parseButtons(choices: string[]): MenuButton[] {
  const buttons = choices.filter((choice) => choice.trim()).map(parseButton);
  if (buttons.length === 0) throw new ChoiceError('a button menu needs at least 1 button');
  return buttons;
}

/** `[Card text\nfooter]`, then `{image}`, then the card's buttons; repeated per card. */
export function parseCarousel(choices: string[]): CarouselCard[] {
  const cards: CarouselCard[] = [];
  for (const choice of choices) {
    const raw = choice.trim();
    if (!raw) continue;
    const card = /^\[(.*)\]$/s.exec(raw);
    if (card) {
      const [text, ...footer] = card[1].split('\n');
      cards.push({ text: text.trim(), footer: footer.join('\n').trim(), media: '', buttons: [] });
      continue;
    }
    const current = cards[cards.length - 1];
    if (!current) throw new ChoiceError('a carousel starts with a [card text]');
    const media = /^\{(.*)\}$/s.exec(raw);
    if (media) current.media = media[1].trim();
    else current.buttons.push(parseButton(raw));
  }
  if (cards.length === 0) throw new ChoiceError('a carousel needs at least one card');
  return cards;
}
