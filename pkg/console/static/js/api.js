// Talking to the broker's API: the same routes, authentication and error
// envelope as any client (docs/console.md). The SAS key, when the broker
// asks for one, lives in this tab's sessionStorage only and travels in the
// aeg-sas-key header, never in a URL.

export const API_VERSION = '2019-01-01-preview';
const KEY = 'edgegrid.console.sasKey';

export function sasKey() {
  try {
    return sessionStorage.getItem(KEY) || '';
  } catch {
    return '';
  }
}

export function setSasKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage refused (a private mode): the key lasts until the page
    // reloads.
  }
  memoryKey = key;
}

let memoryKey = '';

function headers(extra) {
  const hdr = Object.assign({}, extra);
  const key = sasKey() || memoryKey;
  if (key) hdr['aeg-sas-key'] = key;
  return hdr;
}

// ApiError is a failed call: the HTTP status and the envelope's
// details.code and message. unavailable is true when the broker does not
// serve the route (an older broker): 404 or 405. The views read the topic
// or subscription itself first, so a 404 below one that exists means the
// route is missing (an older broker routes GET …/{s}/history as a
// subscription named "{s}/history").
// challenges is, for a 401, what the broker's WWW-Authenticate says of
// each kind of credential it takes (see parseChallenges).
export class ApiError extends Error {
  constructor(status, code, message, challenges) {
    super(message || ('HTTP ' + status));
    this.status = status;
    this.code = code || '';
    this.unavailable = status === 404 || status === 405;
    this.unauthorized = status === 401;
    this.network = status === 0;
    // The broker has no such action (an older broker, or one whose
    // subscriptions do not take it): 400 UnknownAction, or 404 or 405.
    this.unknownAction = this.unavailable || this.code === 'UnknownAction';
    this.challenges = challenges || null;
  }
}

// parseChallenges reads WWW-Authenticate (its values joined with ", ", as
// fetch gives them) into {scheme: {param: value}}: the broker names each
// kind of credential it takes, ClientCertificate, SharedAccessKey and
// SharedAccessSignature, with error="missing" or "refused" where it can
// tell (docs/security.md#refusals). null when there is none: an older
// broker.
export function parseChallenges(header) {
  if (!header) return null;
  const out = {};
  let current = null;
  for (const part of header.split(',')) {
    const m = /^\s*(?:([A-Za-z][\w-]*)(?=\s|$))?\s*(?:([\w-]+)\s*=\s*"([^"]*)")?\s*$/.exec(part);
    if (!m) continue;
    if (m[1]) current = out[m[1]] = {};
    if (m[2] && current) current[m[2]] = m[3];
  }
  return Object.keys(out).length ? out : null;
}

// Listeners told about every answer: onAuth(err) on 401, onReach(ok) on
// whether the broker answered at all, onAnswer(path, value) with every
// successful GET's decoded answer.
const listeners = {onAuth: () => {}, onReach: () => {}, onAnswer: () => {}};
export function listen(l) {
  Object.assign(listeners, l);
}

export function url(path, query) {
  const q = new URLSearchParams(query || {});
  q.set('api-version', API_VERSION);
  return path + '?' + q.toString();
}

// path builds an API path from segments, each escaped.
export function path(...segments) {
  return '/' + segments.map(encodeURIComponent).join('/');
}

async function toError(res) {
  let code = '';
  let message = '';
  try {
    const body = await res.json();
    code = body?.error?.details?.code || '';
    message = body?.error?.details?.message || '';
  } catch {
    // Not the envelope: the status says enough.
  }
  const challenges = res.status === 401 ? parseChallenges(res.headers.get('WWW-Authenticate')) : null;
  return new ApiError(res.status, code, message || res.status + ' ' + res.statusText, challenges);
}

// send fetches p and returns the answer once its status is a success,
// telling the listeners whether the broker was reached and whether it
// refused the key. It throws ApiError.
async function send(p, init) {
  let res;
  try {
    res = await fetch(p, {...init, cache: 'no-store', credentials: 'same-origin'});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    listeners.onReach(false);
    // The browser's own words ("Failed to fetch", "NetworkError when
    // attempting to fetch resource") say nothing to an operator.
    throw new ApiError(0, 'Unreachable', 'The broker does not answer: it may be stopped or restarting, or the network between may be down.');
  }
  listeners.onReach(true);
  if (!res.ok) {
    const err = await toError(res);
    if (err.unauthorized) listeners.onAuth(err);
    throw err;
  }
  return res;
}

// call sends one request and returns the decoded JSON answer (null for an
// empty one). It throws ApiError.
export async function call(method, p, opts = {}) {
  const res = await send(url(p, opts.query), {
    method,
    headers: headers(opts.headers),
    body: opts.body,
    signal: opts.signal,
  });
  const text = await res.text();
  let value = null;
  if (text) {
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  if (method === 'GET') listeners.onAnswer(p, value);
  return value;
}

// action calls one of a subscription's actions (docs/console.md), POST
// {base}:{name} with body as JSON (none when undefined), and returns the
// decoded answer. It throws ApiError; unknownAction is set when the broker
// does not have the action.
export function action(base, name, body) {
  return call('POST', base + ':' + name, body === undefined ? {} :
    {headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
}

export const get = (p, query, signal) => call('GET', p, {query, signal});

// optional is get that answers undefined when the broker does not serve
// the route, so a panel can say "not available".
export async function optional(p, query) {
  try {
    return await get(p, query);
  } catch (e) {
    if (e instanceof ApiError && e.unavailable) return undefined;
    throw e;
  }
}

// stream reads a Server-Sent Events answer with fetch(), which, unlike
// EventSource, can send the aeg-sas-key header. onEvent(name, data, id) is
// called for each event, onOpen() once the answer's headers arrived. It
// resolves when the stream ends and throws ApiError when the broker refuses
// it.
export async function stream(p, {onEvent, onOpen, signal}) {
  const res = await send(url(p), {headers: headers({Accept: 'text/event-stream'}), signal});
  if (onOpen) onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = sseParser(onEvent);
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    parser(value);
  }
}

// sseParser returns a function fed the stream's text in pieces, which
// calls onEvent(name, data, id) for every complete event, as the HTML
// standard's event stream format defines them: data lines joined with \n,
// comments skipped, "message" when no event name was given, id the event's
// own id field ("" when it has none: the last event ID is not carried
// over, as the page does not resume streams by it).
export function sseParser(onEvent) {
  let buf = '';
  let name = '';
  let id = '';
  let data = [];
  return function feed(text) {
    buf += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      if (!m) return;
      // A \r at the very end may be the first half of \r\n.
      if (m[0] === '\r' && m.index === buf.length - 1) return;
      const line = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      if (line === '') {
        if (data.length) onEvent(name || 'message', data.join('\n'), id);
        name = '';
        id = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') name = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
  };
}
