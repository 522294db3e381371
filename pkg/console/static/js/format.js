// Turning the API's values into what the page shows.

const nf = new Intl.NumberFormat('en');

// num formats a count; "—" when the broker does not report it.
export function num(n) {
  return typeof n === 'number' && isFinite(n) ? nf.format(n) : '—';
}

// rate formats events per second.
export function rate(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '—';
  if (n === 0) return '0';
  if (n < 0.1) return '<0.1';
  return n < 10 ? n.toFixed(1) : nf.format(Math.round(n));
}

export function ms(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '—';
  return n < 10 ? n.toFixed(1) + ' ms' : nf.format(Math.round(n)) + ' ms';
}

// ago says how long before now a time was, in words: "12 s ago".
export function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (isNaN(t)) return String(iso);
  let d = Math.round((now - t) / 1000);
  const future = d < 0;
  d = Math.abs(d);
  let text;
  if (d < 60) text = d + ' s';
  else if (d < 3600) text = Math.floor(d / 60) + ' min';
  else if (d < 86400) text = Math.floor(d / 3600) + ' h';
  else text = Math.floor(d / 86400) + ' d';
  return future ? 'in ' + text : text + ' ago';
}

// clock shows a time of day with milliseconds, local time.
export function clock(t) {
  const d = t instanceof Date ? t : new Date(t);
  if (isNaN(d)) return '—';
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) + '.' + p(d.getMilliseconds(), 3);
}

// stamp shows a time as every panel shows it: the time of day with
// milliseconds, local time, and the date before it when it is not today.
// The same instant reads the same wherever it is shown.
export function stamp(t, now = new Date()) {
  const d = t instanceof Date ? t : new Date(t);
  if (isNaN(d)) return '—';
  const p = (n) => String(n).padStart(2, '0');
  const sameDay = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  return (sameDay ? '' : d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ') + clock(d);
}

// when shows a time both ways: "12 s ago (10:00:02.540)".
export function when(iso) {
  if (!iso) return '—';
  return ago(iso) + ' (' + stamp(iso) + ')';
}

// eventTime is an event's own time (eventTime, or time for CloudEvents),
// undefined when it has none.
export function eventTime(ev) {
  if (!ev || typeof ev !== 'object') return undefined;
  const t = ev.eventTime ?? ev.time;
  return typeof t === 'string' && !isNaN(Date.parse(t)) ? t : undefined;
}

// plural is "1 event", "2 events".
export function plural(n, one, many = one + 's') {
  return num(n) + ' ' + (n === 1 ? one : many);
}

// span names a number of seconds: "5 s", "1 min", "2 min".
export function span(seconds) {
  if (seconds < 60 || seconds % 60) return seconds + ' s';
  return seconds === 60 ? 'min' : seconds / 60 + ' min';
}

// destination describes where a subscription delivers, without any
// secret: the kind and the host, never a URL's path or query (which may
// hold a key, as Azure Functions' ?code= does).
export function destination(sub) {
  const p = sub?.properties || {};
  if (p.deliveryConfiguration) return {kind: 'Queue', where: 'pulled by receivers'};
  const d = p.destination || {};
  const dp = d.properties || {};
  const kind = d.endpointType || 'unknown';
  let where = '';
  // A URL whose query may hold a secret comes back as endpointBaseUrl;
  // its host is no secret.
  const url = dp.endpointUrl || dp.endpointBaseUrl;
  if (url) {
    try {
      where = new URL(url).host;
    } catch {
      where = '(invalid URL)';
    }
  } else if (dp.outputName) where = 'output ' + dp.outputName;
  else if (dp.queueName) where = 'queue ' + dp.queueName;
  else if (dp.topicName) where = 'topic ' + dp.topicName;
  return {kind, where};
}

export const isQueue = (sub) => Boolean(sub?.properties?.deliveryConfiguration);

// state returns the subscription's state as the page shows it: the
// broker's when it reports one, else one read from the counts it has always
// reported. A queue subscription whose events nobody receives is not
// "Delivering": it is "NoReceiver", as the broker says itself, unless some
// are locked (being received), a receiver waits for events, or one
// received in the last minute; a broker that does not say it is read so
// from receiversWaiting and lastReceiveTime, where it reports them.
export function state(sub, now = Date.now()) {
  const ds = sub?.properties?.deliveryStatus;
  if (!ds) return 'Unknown';
  let st = ds.state;
  if (!st) {
    if (isQueue(sub)) {
      if (ds.delayed > 0) st = 'Retrying';
      else st = ds.available > 0 || ds.locked > 0 ? 'Delivering' : 'Idle';
    } else if (ds.probationUntil) st = 'OnProbation';
    else if (ds.inBackoff > 0) st = ds.lastError ? 'Failing' : 'Retrying';
    else st = ds.ready > 0 || ds.inFlight > 0 ? 'Delivering' : 'Idle';
  }
  if (st === 'Delivering' && isQueue(sub) && !(ds.locked > 0) && !(ds.receiversWaiting > 0) &&
      !(Date.parse(ds.lastReceiveTime) > now - 60000)) {
    return 'NoReceiver';
  }
  return st;
}

// severity orders states, the most urgent first.
export const severity = {Failing: 0, OnProbation: 1, Retrying: 2, NoReceiver: 3, Paused: 4, Delivering: 5, Idle: 6, Unknown: 7};

export const stateLabel = {OnProbation: 'On probation', NoReceiver: 'Awaiting receiver'};

// failing is true for the states shown in red.
export const failing = (st) => st === 'Failing' || st === 'OnProbation';

// rank orders subscriptions for the lists, the most urgent first: failing,
// then retrying, then any that gave events up (even idle: what was given up
// wants a look), then by state.
export function rank(sub) {
  const st = state(sub);
  const sev = severity[st] ?? 9;
  if (sev <= severity.Retrying) return sev;
  return (givenUp(sub?.properties?.deliveryStatus) > 0 ? 10 : 20) + sev;
}

// queued is how many events a subscription holds.
export function queued(sub) {
  const ds = sub?.properties?.deliveryStatus;
  if (!ds) return undefined;
  if (isQueue(sub)) return (ds.available || 0) + (ds.locked || 0) + (ds.delayed || 0);
  return (ds.ready || 0) + (ds.inBackoff || 0) + (ds.inFlight || 0);
}

// waiting is how many events a purge would remove: those a subscription
// holds, less those in flight (push) or locked by a receiver (queue).
export function waiting(sub) {
  const ds = sub?.properties?.deliveryStatus;
  if (!ds) return 0;
  if (isQueue(sub)) return (ds.available || 0) + (ds.delayed || 0);
  return (ds.ready || 0) + (ds.inBackoff || 0);
}

// delayed is how many events Retry now would make ready: those in
// back-off (push) or released with a delay (queue).
export function delayed(sub) {
  const ds = sub?.properties?.deliveryStatus;
  if (!ds) return 0;
  return (isQueue(sub) ? ds.delayed : ds.inBackoff) || 0;
}

// attemptLimit is how many attempts an event of sub may have, when the
// broker says: the peek's or given-up entry's own limit (entryLimit), else
// the subscription's retry policy (push) or maxDeliveryCount (queue).
// undefined when neither says (the broker's default then applies, which
// the page cannot see).
export function attemptLimit(sub, entryLimit) {
  if (typeof entryLimit === 'number') return entryLimit;
  const p = sub?.properties || {};
  const n = isQueue(sub) ? p.deliveryConfiguration?.queue?.maxDeliveryCount : p.retryPolicy?.maxDeliveryAttempts;
  return typeof n === 'number' ? n : undefined;
}

// attempts says how many attempts an event had: "attempt 2 of 3"; "no
// attempt yet" before the first.
export function attempts(n, limit, queue) {
  const word = queue ? 'delivery' : 'attempt';
  if (!n) return 'no ' + word + ' yet' + (limit ? ' (of ' + limit + ')' : '');
  return word + ' ' + n + (limit ? ' of ' + limit : '');
}

// queueLabel names where a peeked event waits (deliveryState.queue, see
// docs/console.md#peek) in an operator's words.
const queueLabels = {
  ready: 'ready', inFlight: 'in flight', backoff1: 'first back-off', backoff2: 'second back-off',
  scheduled: 'scheduled', available: 'available', locked: 'locked', delayed: 'delayed',
};

export function queueLabel(q) {
  return queueLabels[q] || q || '?';
}

// givenUp is how many events the broker gave up on, when it says.
export function givenUp(ds) {
  if (!ds || (ds.deadLettered === undefined && ds.dropped === undefined)) return undefined;
  return (ds.deadLettered || 0) + (ds.dropped || 0);
}

// Rates remembers each subscription's delivered total between two polls,
// to show delivered events per second.
export class Rates {
  constructor() {
    this.prev = new Map();
  }

  // rate returns the events per second since the previous call for key,
  // undefined on the first call or when the total is not reported.
  rate(key, total, now = Date.now()) {
    if (typeof total !== 'number') return undefined;
    const p = this.prev.get(key);
    this.prev.set(key, {total, now});
    if (!p || now <= p.now || total < p.total) return p ? 0 : undefined;
    return (total - p.total) / ((now - p.now) / 1000);
  }
}
