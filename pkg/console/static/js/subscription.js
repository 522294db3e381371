// The subscription view: state and totals, history charts, the waiting
// events, the events given up on, live outcomes, settings, and the
// operator's actions (actions.js): retry now, pause or resume, purge, and
// redrive what was given up.

import {h, fill, panel, notice, jsonBlock} from './dom.js';
import * as api from './api.js';
import * as f from './format.js';
import {bars, latency, level, fromAPI} from './chart.js';
import {Tail} from './tail.js';
import {badge, chip, describe, eventSummary, expandable, tile, topicHref} from './widgets.js';
import {subscriptionActions, redriveTools, redriveOne, redrivable} from './actions.js';

const PEEK = 50;

export function mount(root, {topic, sub}) {
  const base = api.path('topics', topic, 'eventSubscriptions', sub);
  const head = h('div', {class: 'title-row'}, h('h1', {text: sub}));
  let current = null; // the subscription as GET last answered
  const ctx = {base, topic, sub, get: () => current, done: () => document.dispatchEvent(new Event('console-refresh'))};
  const actions = subscriptionActions(ctx);
  const redrive = redriveTools(ctx);
  ctx.redriveOut = redrive.out;
  const tiles = h('div', {class: 'tiles'});
  const charts = h('div', {class: 'charts'}, notice('muted', 'Loading…'));
  const peekBody = h('div', {}, notice('muted', 'Loading…'));
  const failBody = h('div', {}, notice('muted', 'Loading…'));
  const settings = h('div');
  const open = new Set();
  const outcomes = new Tail({
    path: base + '/deliveries',
    empty: 'Waiting for attempts: the outcome of every delivery attempt from now on appears here.',
    events: {delivery: (o) => ({value: o, at: o && Date.parse(o.time) ? new Date(o.time) : undefined})},
    row: (item) => {
      const o = item.value || {};
      return {
        head: [h('span', {class: 'time', text: f.stamp(item.at), title: 'when the attempt ended'}),
          h('span', {class: 'outcome o-' + o.outcome, text: o.outcome || '?'}),
          h('span', {class: 'id', text: o.eventId || ''})],
        meta: [o.attempt ? 'attempt ' + o.attempt : '', o.statusCode ? 'HTTP ' + o.statusCode : '',
          o.latencyMs !== undefined ? f.ms(o.latencyMs) : '', o.error || '', o.reason || '',
          o.nextAttemptTime ? 'next attempt ' + f.ago(o.nextAttemptTime) : ''].filter(Boolean).join(' · '),
      };
    },
  });
  fill(root,
    h('div', {class: 'page-head'},
      h('div', {class: 'crumbs'}, h('a', {href: '#/', text: 'Overview'}), ' / ', h('a', {href: topicHref(topic), text: topic}), ' / subscription'),
      head, actions.el),
    tiles,
    panel('History, last 15 minutes', {id: 'history'}, charts),
    h('div', {class: 'cols'},
      panel('Waiting events', {id: 'peek', class: 'wide'}, peekBody),
      panel('Live outcomes', {id: 'outcomes', class: 'narrow', tools: outcomes.tools}, outcomes.el)),
    panel('Given up', {id: 'failures', tools: redrive.el}, failBody),
    panel('Settings', {id: 'settings'}, h('p', {class: 'muted small', text: 'As GET returns them; secrets are never returned.'}), settings));
  outcomes.start();
  let historyAt = 0;
  let historyKind = '';

  async function refresh() {
    let s;
    try {
      s = await api.get(base);
    } catch (e) {
      if (e instanceof api.ApiError && e.status === 404) {
        current = null;
        actions.update(null);
        fill(tiles, notice('error', `Subscription "${sub}" of topic "${topic}" does not exist (or no longer does).`));
        return;
      }
      throw e;
    }
    current = s;
    const queue = f.isQueue(s);
    const ds = s.properties?.deliveryStatus || {};
    fill(head, h('h1', {text: sub}), badge(f.state(s)),
      ds.pausedSince ? h('span', {class: 'muted', text: 'since ' + f.when(ds.pausedSince)}) : null,
      chip(f.destination(s).kind), h('span', {class: 'host', text: f.destination(s).where}));
    actions.update(s);
    fill(tiles, statusTiles(s, queue));
    const shown = JSON.parse(JSON.stringify(s));
    if (shown.properties) delete shown.properties.deliveryStatus;
    fill(settings, jsonBlock(shown));
    const [peek, fails] = await Promise.all([
      section(() => api.optional(base + '/events', {top: PEEK}), (a) => peekList(a, s, open)),
      section(() => api.optional(base + '/failures', {top: 100}), (a) => {
        redrive.update(a);
        return failureList(a, s, open, ctx);
      }),
    ]);
    fill(peekBody, peek);
    fill(failBody, fails);
    const kind = queue ? 'queue' : 'push';
    if (Date.now() - historyAt >= 5000 || kind !== historyKind) {
      historyAt = Date.now();
      historyKind = kind;
      fill(charts, await section(() => api.optional(base + '/history'), (a) => historyCharts(a, queue)));
    }
  }

  return {refresh, unmount: () => outcomes.stop()};
}

// section reads a route and renders its answer, or says why it cannot.
async function section(read, render) {
  try {
    const a = await read();
    if (a === undefined) return notice('unavailable', 'Not available on this broker.');
    return render(a);
  } catch (e) {
    if (e instanceof api.ApiError && e.network) throw e;
    return notice('error', describe(e));
  }
}

function statusTiles(s, queue) {
  const ds = s.properties.deliveryStatus || {};
  const out = [];
  if (ds.state === 'Paused' || ds.pausedSince) {
    out.push(tile('Paused since', ds.pausedSince ? f.stamp(ds.pausedSince) : '—',
      (ds.pausedSince ? f.ago(ds.pausedSince) + ': ' : '') + (queue ? 'receivers get nothing' : 'nothing is sent'), 'warn paused'));
  }
  if (queue) {
    out.push(tile('Available', f.num(ds.available), 'can be received now'),
      tile('Locked', f.num(ds.locked), 'received, not yet settled'),
      tile('Delayed', f.num(ds.delayed), ds.nextAttemptTime ? 'next available ' + f.ago(ds.nextAttemptTime) : 'released with a delay'));
    if (ds.receiversWaiting !== undefined || ds.lastReceiveTime) {
      out.push(tile('Receivers waiting', f.num(ds.receiversWaiting),
        ds.lastReceiveTime ? 'last receive ' + f.ago(ds.lastReceiveTime) : 'no receive yet',
        ds.receiversWaiting > 0 || Date.parse(ds.lastReceiveTime) > Date.now() - 60000 ? '' : 'warn'));
    }
  } else {
    out.push(tile('Ready', f.num(ds.ready), 'waiting for an attempt now'),
      tile('In back-off', f.num(ds.inBackoff), ds.nextAttemptTime ? 'next attempt ' + f.ago(ds.nextAttemptTime) : 'waiting to be retried', ds.inBackoff > 0 ? 'warn' : ''),
      tile('In flight', f.num(ds.inFlight), ds.concurrencyLimit ? 'of at most ' + ds.concurrencyLimit : null));
  }
  out.push(tile(queue ? 'Acknowledged' : 'Delivered', f.num(ds.delivered), ds.lastSuccessTime ? 'last ' + f.ago(ds.lastSuccessTime) : null),
    tile(queue ? 'Released or expired' : 'Failed attempts', f.num(ds.failedAttempts), null, ds.failedAttempts > 0 ? 'warn' : ''),
    tile('Given up', f.num(f.givenUp(ds)), ds.deadLettered !== undefined ? `${f.num(ds.deadLettered)} dead-lettered · ${f.num(ds.dropped)} dropped` : null, f.givenUp(ds) > 0 ? 'bad' : ''));
  if (ds.oldestQueuedTime) out.push(tile('Oldest queued', f.ago(ds.oldestQueuedTime), f.stamp(ds.oldestQueuedTime)));
  if (ds.probationUntil) out.push(tile('On probation until', f.stamp(ds.probationUntil), f.ago(ds.probationUntil), 'bad'));
  if (ds.lastError) {
    // Red while the subscription fails; a past failure is history.
    const now = f.failing(ds.state);
    out.push(h('div', {class: 'tile wide-tile ' + (now ? 'bad' : 'past')},
      h('div', {class: 'tile-label', text: 'Last failure' + (ds.lastFailureTime ? ', ' + f.when(ds.lastFailureTime) : '')}),
      h('div', {class: 'tile-value err-text'}, ds.lastFailureStatusCode ? h('strong', {text: 'HTTP ' + ds.lastFailureStatusCode + ' '}) : null, ds.lastError)));
  }
  return out;
}

// historyCharts draws what happened per interval; a queue subscription has
// no delivery requests, so no latency, and its failures are releases and
// expired locks.
function historyCharts(a, queue) {
  const hist = fromAPI(a);
  const sr = hist.series;
  const out = [bars(hist, [
    {name: queue ? 'Acknowledged' : 'Delivered', cls: 's-delivered', values: sr.delivered || []},
    {name: queue ? 'Released or expired' : 'Failed', cls: 's-failed', values: sr.failed || []},
    {name: 'Given up', cls: 's-givenup', values: sr.givenUp || []},
  ])];
  if (!queue) out.push(latency(hist, sr.latencyP50Ms || [], sr.latencyP99Ms || []));
  out.push(level(hist, 'Held', 's-queued', sr.queued || []));
  return out;
}

// byAge orders peeked events oldest first: by when the broker accepted
// them, then (events of one request share that time) by their own time,
// then as the broker listed them.
function byAge(value) {
  const key = (item, i) => ({acc: Date.parse(item?.deliveryState?.enqueuedTime) || 0, own: Date.parse(f.eventTime(item?.event)) || 0, i});
  return value.map(key).sort((a, b) => a.acc - b.acc || a.own - b.own || a.i - b.i).map((k) => value[k.i]);
}

function peekList(a, sub, open) {
  const value = byAge(a.value || []);
  const queue = f.isQueue(sub);
  if (!value.length) return notice('muted', 'Nothing waits: the subscription holds no events.');
  return [
    h('p', {class: 'muted small', text: `Oldest first: ${value.length} of ${f.num(a.total ?? value.length)} waiting` + (a.truncated ? ' (cut short by size)' : '') + '. Peeking delivers, locks and reorders nothing; open an event for its last error and its JSON.'}),
    h('ul', {class: 'rows peek'}, value.map((item) => {
      const d = item.deliveryState || {};
      const ev = eventSummary(item.event);
      const key = 'p:' + ev.id + ':' + d.enqueuedTime;
      const limit = f.attemptLimit(sub, d.maxAttempts);
      const tries = f.attempts(d.attempts, limit, queue);
      const next = d.nextAttemptTime ? nextWords(d.queue) + ' ' + f.ago(d.nextAttemptTime) + ' (' + f.stamp(d.nextAttemptTime) + ')' : '';
      const own = f.eventTime(item.event);
      return expandable({
        head: [h('span', {class: 'time', text: own ? f.stamp(own) : '—', title: 'the event\'s time'}),
          h('span', {class: 'q q-' + d.queue, text: f.queueLabel(d.queue), title: d.queue || ''}),
          h('span', {class: 'type', text: ev.type}),
          h('span', {class: 'subject', text: ev.subject}),
          h('span', {class: 'id', text: ev.id})],
        meta: [tries, next, d.lastError || ''].filter(Boolean).join(' · '),
        facts: [
          ['Waits', f.queueLabel(d.queue)],
          [queue ? 'Deliveries' : 'Attempts', tries],
          d.nextAttemptTime ? [cap(nextWords(d.queue)), f.when(d.nextAttemptTime)] : null,
          d.lastError ? ['Last error', h('span', {class: 'err-text', text: d.lastError})] : null,
          d.enqueuedTime ? ['Accepted', f.when(d.enqueuedTime)] : null,
          own ? ['Event time', f.stamp(own)] : null,
        ],
        value: item.event, open: open.has(key), onToggle: (o) => (o ? open.add(key) : open.delete(key)),
      });
    })),
  ];
}

// nextWords says what nextAttemptTime means where an event waits.
function nextWords(queue) {
  if (queue === 'locked') return 'lock ends';
  if (queue === 'delayed') return 'available';
  return 'next attempt';
}

const cap = (t) => t.charAt(0).toUpperCase() + t.slice(1);

function failureList(a, sub, open, ctx) {
  const value = a.value || [];
  const queue = f.isQueue(sub);
  if (!value.length) return notice('muted', 'The broker has given up on no event of this subscription.');
  return [
    h('p', {class: 'muted small', text: `Newest first: ${value.length} listed, ${f.num(a.total ?? value.length)} given up on in all. ` +
      'Redrive puts events back on this subscription only, as if newly published.'}),
    h('ul', {class: 'rows failures'}, value.map((item) => {
      const key = 'f:' + item.eventId + ':' + item.time;
      const limit = f.attemptLimit(sub, item.maxAttempts);
      const tries = f.attempts(item.attempts, limit, queue);
      const own = f.eventTime(item.event);
      const ev = eventSummary(item.event);
      return expandable({
        head: [h('span', {class: 'time', text: own ? f.stamp(own) : '—', title: 'the event\'s time'}),
          h('span', {class: 'outcome o-' + item.outcome, text: item.outcome}),
          h('span', {class: 'reason', text: item.reason || ''}),
          h('span', {class: 'subject', text: ev.subject}),
          h('span', {class: 'id', text: item.eventId || ''})],
        meta: ['given up ' + f.ago(item.time), item.redrivenTime ? 'redriven ' + f.ago(item.redrivenTime) : '', tries,
          item.lastStatusCode ? 'HTTP ' + item.lastStatusCode : '', item.lastError || ''].filter(Boolean).join(' · '),
        facts: [
          ['Given up', f.when(item.time)],
          ['Outcome', item.outcome + (item.reason ? ': ' + item.reason : '')],
          [queue ? 'Deliveries' : 'Attempts', tries],
          item.lastStatusCode ? ['Last status', 'HTTP ' + item.lastStatusCode] : null,
          item.lastError ? ['Last error', h('span', {class: 'err-text', text: item.lastError})] : null,
          own ? ['Event time', f.stamp(own)] : null,
          item.eventBytes !== undefined ? ['Size', f.plural(item.eventBytes, 'byte')] : null,
          item.redrivenTime ? ['Redriven', f.when(item.redrivenTime)] : null,
        ],
        value: item.event ?? {eventBytes: item.eventBytes, note: 'too large to keep'},
        open: open.has(key), onToggle: (o) => (o ? open.add(key) : open.delete(key)),
        tools: item.eventId && redrivable(item) ? redriveOne(ctx, item, ctx.redriveOut) : null,
      });
    })),
  ];
}
