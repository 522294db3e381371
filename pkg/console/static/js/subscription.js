// The subscription view: state and totals, history charts, the waiting
// events, the events given up on, live outcomes, settings, Retry now.

import {h, fill, panel, notice, jsonBlock} from './dom.js';
import * as api from './api.js';
import * as f from './format.js';
import {bars, lines, fromAPI} from './chart.js';
import {Tail} from './tail.js';
import {badge, chip, describe, eventSummary, expandable, tile, topicHref} from './widgets.js';

const PEEK = 50;

export function mount(root, {topic, sub}) {
  const base = api.path('topics', topic, 'eventSubscriptions', sub);
  const head = h('div', {class: 'title-row'}, h('h1', {text: sub}));
  const retryOut = h('span', {class: 'result', role: 'status'});
  const retry = h('button', {type: 'button', class: 'btn primary', text: 'Retry now', title: 'Make every event waiting in back-off ready at once'});
  retry.addEventListener('click', () => retryNow(base, retry, retryOut));
  const tiles = h('div', {class: 'tiles'});
  const charts = h('div', {class: 'charts'}, notice('muted', 'Loading…'));
  const peekBody = h('div', {}, notice('muted', 'Loading…'));
  const failBody = h('div', {}, notice('muted', 'Loading…'));
  const settings = h('div');
  const open = new Set();
  const outcomes = new Tail({
    path: base + '/deliveries',
    empty: 'Waiting for attempts: the outcome of every delivery attempt from now on appears here.',
    events: {delivery: (o) => ({value: o})},
    row: (item) => {
      const o = item.value || {};
      return [h('span', {class: 'time', text: f.clock(item.at)}),
        h('span', {class: 'outcome o-' + o.outcome, text: o.outcome || '?'}),
        h('span', {class: 'id', text: o.eventId || ''}),
        h('span', {class: 'muted meta', text: [o.statusCode, o.latencyMs !== undefined ? f.ms(o.latencyMs) : '', o.error || o.reason || ''].filter(Boolean).join(' · ')})];
    },
  });
  fill(root,
    h('div', {class: 'page-head'},
      h('div', {class: 'crumbs'}, h('a', {href: '#/', text: 'Overview'}), ' / ', h('a', {href: topicHref(topic), text: topic}), ' / subscription'),
      head),
    tiles,
    panel('History, last 15 minutes', {id: 'history'}, charts),
    h('div', {class: 'cols'},
      panel('Waiting events', {id: 'peek', class: 'wide', tools: h('div', {class: 'tools'}, retryOut, retry)}, peekBody),
      panel('Live outcomes', {id: 'outcomes', class: 'narrow', tools: outcomes.tools}, outcomes.el)),
    panel('Given up', {id: 'failures'}, failBody),
    panel('Settings', {id: 'settings'}, h('p', {class: 'muted small', text: 'As GET returns them; secrets are never returned.'}), settings));
  outcomes.start();
  let historyAt = 0;

  async function refresh() {
    let s;
    try {
      s = await api.get(base);
    } catch (e) {
      if (e instanceof api.ApiError && e.status === 404) {
        fill(tiles, notice('error', `Subscription "${sub}" of topic "${topic}" does not exist (or no longer does).`));
        return;
      }
      throw e;
    }
    const queue = f.isQueue(s);
    retry.title = queue ? 'Make every delayed event available at once' : retry.title;
    fill(head, h('h1', {text: sub}), badge(f.state(s)), chip(f.destination(s).kind), h('span', {class: 'host', text: f.destination(s).where}));
    fill(tiles, statusTiles(s, queue));
    const shown = JSON.parse(JSON.stringify(s));
    if (shown.properties) delete shown.properties.deliveryStatus;
    fill(settings, jsonBlock(shown));
    const [peek, fails] = await Promise.all([
      section(() => api.optional(base + '/events', {top: PEEK}), (a) => peekList(a, open)),
      section(() => api.optional(base + '/failures', {top: 100}), (a) => failureList(a, open)),
    ]);
    fill(peekBody, peek);
    fill(failBody, fails);
    if (Date.now() - historyAt >= 5000) {
      historyAt = Date.now();
      fill(charts, await section(() => api.optional(base + '/history'), (a) => historyCharts(a)));
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
    return notice('error', describe(e));
  }
}

function statusTiles(s, queue) {
  const ds = s.properties.deliveryStatus || {};
  const out = [];
  if (queue) {
    out.push(tile('Available', f.num(ds.available), 'can be received now'),
      tile('Locked', f.num(ds.locked), 'received, not yet settled'),
      tile('Delayed', f.num(ds.delayed), ds.nextAttemptTime ? 'next ' + f.ago(ds.nextAttemptTime) : 'released with a delay'));
  } else {
    out.push(tile('Ready', f.num(ds.ready), 'waiting for an attempt now'),
      tile('In back-off', f.num(ds.inBackoff), ds.nextAttemptTime ? 'next attempt ' + f.ago(ds.nextAttemptTime) : 'waiting to be retried', ds.inBackoff > 0 ? 'warn' : ''),
      tile('In flight', f.num(ds.inFlight), ds.concurrencyLimit ? 'of at most ' + ds.concurrencyLimit : null));
  }
  out.push(tile('Delivered', f.num(ds.delivered), ds.lastSuccessTime ? 'last ' + f.ago(ds.lastSuccessTime) : null),
    tile('Failed attempts', f.num(ds.failedAttempts), null, ds.failedAttempts > 0 ? 'warn' : ''),
    tile('Given up', f.num(f.givenUp(ds)), ds.deadLettered !== undefined ? `${f.num(ds.deadLettered)} dead-lettered · ${f.num(ds.dropped)} dropped` : null, f.givenUp(ds) > 0 ? 'bad' : ''));
  if (ds.oldestQueuedTime) out.push(tile('Oldest queued', f.ago(ds.oldestQueuedTime)));
  if (ds.probationUntil) out.push(tile('On probation until', f.clock(ds.probationUntil), f.ago(ds.probationUntil), 'bad'));
  if (ds.lastError) {
    // Red while the subscription fails; a past failure is history.
    const now = ds.state === 'Failing' || ds.state === 'OnProbation';
    out.push(h('div', {class: 'tile wide-tile ' + (now ? 'bad' : 'past')},
      h('div', {class: 'tile-label', text: 'Last failure' + (ds.lastFailureTime ? ', ' + f.when(ds.lastFailureTime) : '')}),
      h('div', {class: 'tile-value err-text'}, ds.lastFailureStatusCode ? h('strong', {text: 'HTTP ' + ds.lastFailureStatusCode + ' '}) : null, ds.lastError)));
  }
  return out;
}

function historyCharts(a) {
  const hist = fromAPI(a);
  const sr = hist.series;
  return [
    bars(hist, [
      {name: 'Delivered', cls: 's-delivered', values: sr.delivered || []},
      {name: 'Failed', cls: 's-failed', values: sr.failed || []},
      {name: 'Given up', cls: 's-givenup', values: sr.givenUp || []},
    ], 'events per 5 s'),
    lines(hist, [
      {name: 'p50 latency', cls: 's-p50', values: sr.latencyP50Ms || []},
      {name: 'p99 latency', cls: 's-p99', values: sr.latencyP99Ms || []},
    ], 'ms'),
    lines(hist, [{name: 'Queued', cls: 's-queued', values: sr.queued || []}], 'events'),
  ];
}

function peekList(a, open) {
  const value = a.value || [];
  if (!value.length) return notice('muted', 'Nothing waits: the subscription holds no events.');
  return [
    h('p', {class: 'muted small', text: `Oldest first: ${value.length} of ${f.num(a.total ?? value.length)} waiting` + (a.truncated ? ' (cut short by size)' : '') + '. Peeking delivers, locks and reorders nothing.'}),
    h('ul', {class: 'rows'}, value.map((item) => {
      const d = item.deliveryState || {};
      const ev = eventSummary(item.event);
      const key = 'p:' + ev.id + ':' + d.enqueuedTime;
      return expandable([
        h('span', {class: 'q q-' + d.queue, text: f.queueLabel(d.queue), title: d.queue || ''}),
        h('span', {class: 'type', text: ev.type}),
        h('span', {class: 'subject', text: ev.subject}),
        h('span', {class: 'id', text: ev.id}),
        h('span', {class: 'muted meta', text: `attempts ${d.attempts ?? 0}` + (d.nextAttemptTime ? ' · next ' + f.ago(d.nextAttemptTime) : '') + (d.lastError ? ' · ' + d.lastError : '')}),
      ], item.event, open.has(key), (o) => (o ? open.add(key) : open.delete(key)));
    })),
  ];
}

function failureList(a, open) {
  const value = a.value || [];
  if (!value.length) return notice('muted', 'The broker has given up on no event of this subscription.');
  return [
    h('p', {class: 'muted small', text: `Newest first: ${value.length} listed, ${f.num(a.total ?? value.length)} given up on in all.`}),
    h('ul', {class: 'rows'}, value.map((item) => {
      const key = 'f:' + item.eventId + ':' + item.time;
      return expandable([
        h('span', {class: 'time', text: f.clock(item.time)}),
        h('span', {class: 'outcome o-' + item.outcome, text: item.outcome}),
        h('span', {class: 'reason', text: item.reason || ''}),
        h('span', {class: 'subject', text: eventSummary(item.event).subject}),
        h('span', {class: 'id', text: item.eventId || ''}),
        h('span', {class: 'muted meta', text: `attempts ${item.attempts ?? 0}` + (item.lastStatusCode ? ' · HTTP ' + item.lastStatusCode : '') + (item.lastError ? ' · ' + item.lastError : '')}),
      ], item.event ?? {eventBytes: item.eventBytes, note: 'too large to keep'}, open.has(key), (o) => (o ? open.add(key) : open.delete(key)));
    })),
  ];
}

async function retryNow(base, btn, out) {
  btn.disabled = true;
  out.className = 'result';
  out.textContent = 'Retrying…';
  try {
    const a = await api.call('POST', base + ':retryNow');
    const n = a?.moved ?? 0;
    out.className = 'result ok';
    out.textContent = n === 1 ? '1 event made ready.' : `${n} events made ready.`;
  } catch (e) {
    out.className = 'result error';
    out.textContent = e instanceof api.ApiError && e.unavailable ? 'Retry now is not available on this broker.' : describe(e);
  } finally {
    btn.disabled = false;
  }
}
