// A sample of realistic TypeScript for ts_text's oracle test: each module is checked on its
// own (up to its first division or regular expression) and all of them as one text.
import { EventEmitter } from 'events';
import type { Readable, Writable } from "stream";
import * as path from 'path';

/**
 * Options for a {@link Client}: where it connects (`host`, `port`), how long it waits.
 *
 * @example
 * const client = new Client({ host: 'localhost', port: 8080 });
 * await client.connect(); // resolves once "ready" (or [rejects], on timeout)
 */
export interface ClientOptions {
  host: string;
  port?: number;
  timeouts: { connect: number; idle: number };
  headers: Record<string, string | string[]>;
  onError?: (error: Error, context: { attempt: number; url: string }) => void;
}

export enum State {
  Idle = 'idle',
  Connecting = "connecting (first time)",
  Open = 'open, [ready]',
  Closed = `closed`,
}

type Listener<T extends unknown[]> = (...args: T) => void;
type Events = {
  message: [data: string, from: { id: number }];
  'state-change': [from: State, to: State];
  "error": [Error];
};

export class Client extends EventEmitter {
  #state: State = State.Idle;
  private readonly listeners = new Map<keyof Events, Set<Listener<any[]>>>();
  private queue: Array<{ id: number; payload: string }> = [];

  constructor(private readonly options: ClientOptions) {
    super();
    const { host, port = 443, headers = {} } = options;
    this.url = `wss://${host}:${port}/socket?v=${encodeURIComponent('1.2')}`;
    this.headers = { ...headers, 'user-agent': `client (${process.platform}, ${process.arch})` };
  }

  url: string;
  headers: Record<string, string | string[]>;

  get state(): State {
    return this.#state;
  }

  async connect(attempt = 0): Promise<void> {
    this.transition(State.Connecting);
    try {
      await this.open(this.url, { attempt, signal: undefined });
      this.transition(State.Open);
    } catch (error) {
      this.options.onError?.(error as Error, { attempt, url: this.url });
      // Retry with backoff: 100ms, 200ms, 400ms (capped at [1s]).
      if (attempt < 3) {
        await delay(Math.min(1000, 100 * 2 ** attempt));
        return this.connect(attempt + 1);
      }
      throw new Error(`could not connect to "${this.url}" after ${attempt + 1} attempts`);
    }
  }

  send(id: number, payload: string): void {
    if (this.#state !== State.Open) {
      this.queue.push({ id, payload });
      return;
    }
    this.emit('message', payload, { id });
  }

  private transition(to: State): void {
    const from = this.#state;
    this.#state = to;
    this.emit('state-change', from, to);
    console.debug(`[client] ${from} -> ${to} (queue: ${this.queue.map(({ id }) => id).join(', ')})`);
  }

  private async open(url: string, init: { attempt: number; signal?: AbortSignal }): Promise<void> {
    const response = await fetch(url, { method: 'GET', headers: { ...this.headers } });
    if (!response.ok) {
      throw new Error(`HTTP ${response.status}: ${response.statusText || '(no text)'}`);
    }
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
// ---- module ----
import { strict as assert } from 'assert';

/* A cache keyed by (namespace, key) pairs; entries expire after `ttl` ms.
   Not safe across processes: see "docs/cache.md" [section 2]. */
export class Cache<K extends string | number, V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(private readonly ttl: number, private readonly now: () => number = Date.now) {}

  private keyOf(namespace: string, key: K): string {
    return `${namespace}::${String(key)}`;
  }

  get(namespace: string, key: K): V | undefined {
    const entry = this.entries.get(this.keyOf(namespace, key));
    if (!entry || entry.expires <= this.now()) {
      return undefined;
    }
    return entry.value;
  }

  set(namespace: string, key: K, value: V): this {
    this.entries.set(this.keyOf(namespace, key), { value, expires: this.now() + this.ttl });
    return this;
  }

  *keys(): IterableIterator<[string, K]> {
    for (const composite of this.entries.keys()) {
      const [namespace, key] = composite.split('::', 2);
      yield [namespace, key as unknown as K];
    }
  }
}

export const defaults = Object.freeze({
  ttl: 60_000,
  namespaces: ['users', "sessions", `tokens`] as const,
  labels: { users: 'Users (active)', sessions: "Sessions [open]", tokens: '{tokens}' },
});

export type Namespace = (typeof defaults.namespaces)[number];

export function describe(ns: Namespace, count: number): string {
  switch (ns) {
    case 'users':
      return `${count} user${count === 1 ? '' : 's'}`;
    case "sessions":
      return `${count} session(s)`;
    default:
      return `${count} ${defaults.labels[ns]}`;
  }
}

assert.equal(describe('users', 2), '2 users');
// ---- module ----
type Primitive = string | number | boolean | null | undefined;

export type DeepReadonly<T> = T extends Primitive
  ? T
  : T extends Array<infer U>
    ? ReadonlyArray<DeepReadonly<U>>
    : { readonly [K in keyof T]: DeepReadonly<T[K]> };

export type Route = `/${string}` | `${'GET' | 'POST'} /api/${string}`;
export type EventName<T extends string> = `on${Capitalize<T>}`;
type Pair<A, B> = [first: A, second: B];

export interface Repository<T extends { id: string }> {
  find(id: T['id']): Promise<T | undefined>;
  findMany(filter: Partial<T>, options?: { limit?: number; order?: [keyof T, 'asc' | 'desc'] }): Promise<T[]>;
  save(entity: Omit<T, 'id'> & Partial<Pick<T, 'id'>>): Promise<T>;
}

export function isPair<A, B>(value: unknown): value is Pair<A, B> {
  return Array.isArray(value) && value.length === 2;
}

export function zip<A, B>(as: readonly A[], bs: readonly B[]): Array<Pair<A, B>> {
  return as.slice(0, Math.min(as.length, bs.length)).map((a, i) => [a, bs[i]] as Pair<A, B>);
}

export const enum Flags {
  None = 0,
  Read = 1 << 0,
  Write = 1 << 1,
  All = Read | Write,
}

declare module 'events' {
  interface EventEmitter {
    once(event: 'ready', listener: () => void): this;
  }
}

declare global {
  interface Window {
    __APP_STATE__?: { version: string; flags: Flags };
  }
}

export abstract class Shape {
  abstract area(): number;
  toString(): string {
    return `${this.constructor.name}(area=${this.area().toFixed(2)})`;
  }
}

export class Circle extends Shape {
  constructor(public readonly radius: number) {
    super();
  }
  area(): number {
    return Math.PI * this.radius ** 2;
  }
}

export class Rect extends Shape {
  constructor(public readonly w: number, public readonly h: number) {
    super();
  }
  area(): number {
    return this.w * this.h;
  }
  ratio(): number {
    return this.w / this.h;
  }
}
// ---- module ----
function log(prefix: string) {
  return function (target: object, key: string | symbol, descriptor: PropertyDescriptor) {
    const original = descriptor.value as (...args: unknown[]) => unknown;
    descriptor.value = function (this: unknown, ...args: unknown[]) {
      console.log(`${prefix} ${String(key)}(${args.map((arg) => JSON.stringify(arg)).join(', ')})`);
      return original.apply(this, args);
    };
  };
}

function Component(config: { selector: string; template: string; styles?: string[] }) {
  return <T extends new (...args: any[]) => object>(constructor: T) => constructor;
}

@Component({
  selector: 'app-list',
  template: `
    <ul class="list">
      <li *ngFor="let item of items; index as i">{{ i }}: {{ item.name }} ({{ item.tags.join(', ') }})</li>
    </ul>
  `,
  styles: ['.list { margin: 0 [auto]; }', ":host { display: block; }"],
})
export class ListComponent {
  items: Array<{ name: string; tags: string[] }> = [
    { name: 'first (1)', tags: ['a', 'b'] },
    { name: "second, [2]", tags: [] },
    { name: `third {3}`, tags: ['c'] },
  ];

  @log('[list]')
  add(name: string, ...tags: string[]): void {
    this.items = [...this.items, { name, tags }];
  }

  @log("[list]")
  remove(index: number): void {
    this.items = this.items.filter((_, i) => i !== index);
  }

  render(): string {
    return this.items
      .map(({ name, tags }, i) => `${i + 1}. ${name}${tags.length ? ` [${tags.map((t) => `#${t}`).join(' ')}]` : ''}`)
      .join('\n');
  }
}

const handlers: Record<string, (event: { type: string; detail?: unknown }) => void> = {
  click: ({ detail }) => console.log('click', detail),
  'key-down': (event) => void event,
  "scroll(end)": () => {},
};

export { handlers };
// ---- module ----
/** Parses `key=value; key2="quoted; value"` pairs (a cookie-like header). */
export function parseHeader(header: string): Map<string, string> {
  const result = new Map<string, string>();
  let key = '';
  let value = '';
  let inQuotes = false;
  let readingKey = true;
  for (const char of header) {
    if (char === '"') {
      inQuotes = !inQuotes;
    } else if (char === ';' && !inQuotes) {
      if (key) result.set(key.trim(), value.trim());
      key = '';
      value = '';
      readingKey = true;
    } else if (char === '=' && readingKey && !inQuotes) {
      readingKey = false;
    } else if (readingKey) {
      key += char;
    } else {
      value += char;
    }
  }
  if (key) result.set(key.trim(), value.trim());
  return result;
}

export const escapes = {
  quote: '\'',
  doubleQuote: "\"",
  backslash: '\\',
  backtick: `\``,
  dollar: `\${not a substitution}`,
  newline: 'line one\nline two',
  unicode: '\u{1F600} \u0041 \x41',
  brackets: '([{}])',
  commentLike: '// not a comment, /* nor this */',
  continued: 'first \
second',
};

export async function* pages<T>(
  load: (cursor: string | null) => Promise<{ items: T[]; next: string | null }>,
): AsyncGenerator<T[], void, undefined> {
  let cursor: string | null = null;
  do {
    const { items, next } = await load(cursor);
    yield items;
    cursor = next;
  } while (cursor !== null);
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let index = 0;
  let size = bytes;
  while (size >= 1024 && index < units.length - 1) {
    size /= 1024;
    index++;
  }
  return `${size.toFixed(index === 0 ? 0 : 1)} ${units[index]}`;
}

const SLUG = /[^a-z0-9]+/g;
export const slugify = (text: string): string => text.toLowerCase().replace(SLUG, '-');
export const isEmail = (text: string) => /^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i.test(text);
// ---- module ----
import { readFile } from 'fs/promises';

interface Config {
  name: string;
  version: `${number}.${number}.${number}`;
  scripts: { [name: string]: string };
  dependencies?: Record<string, string>;
}

export async function loadConfig(file = 'package.json'): Promise<Config> {
  const text = await readFile(file, 'utf8');
  const parsed = JSON.parse(text) as Partial<Config>;
  const missing = (['name', 'version', 'scripts'] as const).filter((key) => !(key in parsed));
  if (missing.length > 0) {
    throw new TypeError(`${file}: missing ${missing.map((key) => `"${key}"`).join(', ')}`);
  }
  return parsed as Config;
}

export function diff<T extends object>(before: T, after: T): Array<[keyof T, unknown, unknown]> {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)] as Array<keyof T>);
  const changes: Array<[keyof T, unknown, unknown]> = [];
  for (const key of keys) {
    if (before[key] !== after[key]) {
      changes.push([key, before[key], after[key]]);
    }
  }
  return changes;
}

label: for (const [i, row] of [[1, 2], [3, 4]].entries()) {
  for (const cell of row) {
    if (cell > 3) break label;
    if (cell % 2 === 0) continue label;
    console.log(i, cell);
  }
}

export const table = [
  ['name', 'size (bytes)', 'modified'],
  ['a.txt', '1,024', '2024-01-01'],
  ["b [copy].txt", "2,048", "2024-02-02"],
].map((row) => row.join('\t'));

export const percent = (part: number, whole: number) => `${Math.round((part / whole) * 100)}%`;
