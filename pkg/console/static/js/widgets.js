// Pieces several views share: state badges, subscription rows, stat
// tiles, expandable event lists.

import {h, jsonBlock} from './dom.js';
import * as f from './format.js';
import * as api from './api.js';

export function badge(state) {
  return h('span', {class: 'badge state-' + state, text: f.stateLabel[state] || state});
}

export function chip(text, cls = '') {
  return h('span', {class: 'chip ' + cls, text});
}

export const topicHref = (t) => '#/topics/' + encodeURIComponent(t);
export const subHref = (t, s) => topicHref(t) + '/subscriptions/' + encodeURIComponent(s);

// tile is one figure with its label and an optional line below.
export function tile(label, value, note, cls = '') {
  return h('div', {class: 'tile ' + cls},
    h('div', {class: 'tile-label', text: label}),
    h('div', {class: 'tile-value', text: value}),
    note ? h('div', {class: 'tile-note', text: note}) : null);
}

// cell is a table cell that names its column, for the narrow layout where
// rows become cards.
export function cell(label, ...content) {
  return h('td', {'data-label': label}, ...content);
}

const subColumns = ['State', 'Subscription', 'Destination', 'Queued', 'Delivered', 'Failed attempts', 'Given up', 'Last error'];

// subscriptionTable lists subscriptions, the most urgent first (see
// rank); rates gives delivered/s by subscription.
export function subscriptionTable(subs, rates, showTopic = true) {
  const sorted = [...subs].sort((a, b) => f.rank(a) - f.rank(b) ||
    a.properties.topic.localeCompare(b.properties.topic) || a.name.localeCompare(b.name));
  return h('table', {class: 'grid subs'},
    h('thead', {}, h('tr', {}, subColumns.map((c) => h('th', {text: c})))),
    h('tbody', {}, sorted.map((sub) => subscriptionRow(sub, rates, showTopic))));
}

function subscriptionRow(sub, rates, showTopic) {
  const ds = sub.properties.deliveryStatus || {};
  const st = f.state(sub);
  const dest = f.destination(sub);
  const topic = sub.properties.topic;
  const r = rates.rate(topic + '/' + sub.name, ds.delivered);
  const given = f.givenUp(ds);
  return h('tr', {class: f.failing(st) ? 'bad' : given > 0 ? 'gave-up' : ''},
    cell('State', badge(st), ds.pausedSince ? h('div', {class: 'muted small', text: 'since ' + f.stamp(ds.pausedSince)}) : null),
    cell('Subscription', h('a', {href: subHref(topic, sub.name), class: 'name'},
      showTopic ? h('span', {class: 'muted', text: topic + ' / '}) : null, sub.name)),
    cell('Destination', chip(dest.kind), ' ', h('span', {class: 'host', text: dest.where})),
    cell('Queued', h('span', {class: 'n', text: f.num(f.queued(sub))})),
    cell('Delivered', h('span', {class: 'n', text: f.num(ds.delivered)}),
      r !== undefined ? h('span', {class: 'muted small rate', text: ' ' + f.rate(r) + '/s'}) : null),
    cell('Failed attempts', h('span', {class: 'n' + (ds.failedAttempts > 0 ? ' warn' : ''), text: f.num(ds.failedAttempts)})),
    cell('Given up', h('span', {class: 'n' + (given > 0 ? ' warn' : ''), text: f.num(given)})),
    cell('Last error', lastError(ds)));
}

function lastError(ds) {
  if (!ds.lastError) return h('span', {class: 'muted', text: '—'});
  const code = ds.lastFailureStatusCode ? ds.lastFailureStatusCode + ' · ' : '';
  return h('span', {class: 'err', text: code + ds.lastError},
    ds.lastFailureTime ? h('span', {class: 'muted', text: ' · ' + f.ago(ds.lastFailureTime)}) : null);
}

// eventSummary is an event's id, type and subject, whatever its schema.
export function eventSummary(ev) {
  if (!ev || typeof ev !== 'object') return {id: '', type: '', subject: ''};
  return {
    id: String(ev.id ?? ''),
    type: String(ev.eventType ?? ev.type ?? ''),
    subject: String(ev.subject ?? ''),
  };
}

// expandable is a list row: a summary (head: spans on the first line,
// meta: a line below that wraps, so nothing is cut off) that opens to
// show facts ([label, value] pairs) and value as JSON; tools are buttons
// beside the summary.
export function expandable({head, meta, facts = [], value, open, onToggle, tools}) {
  const detail = h('div', {class: 'detail', hidden: !open},
    facts.length ? h('dl', {class: 'facts'}, facts.filter(Boolean).map(([k, v]) => [h('dt', {text: k}), h('dd', {}, v)])) : null,
    jsonBlock(value));
  const item = h('li', {class: 'row' + (open ? ' open' : '')});
  const btn = h('button', {class: 'row-head', type: 'button', 'aria-expanded': String(Boolean(open))},
    h('span', {class: 'row-main'}, head),
    meta ? h('span', {class: 'row-meta muted', text: meta}) : null);
  btn.addEventListener('click', () => {
    detail.hidden = !detail.hidden;
    item.classList.toggle('open', !detail.hidden);
    btn.setAttribute('aria-expanded', String(!detail.hidden));
    if (onToggle) onToggle(!detail.hidden);
  });
  item.append(h('div', {class: 'row-line'}, btn, tools ? h('div', {class: 'row-tools'}, tools) : null), detail);
  return item;
}

// describe turns a failed call into a sentence for a panel.
export function describe(err) {
  if (err instanceof api.ApiError) {
    if (err.unavailable) return 'Not available on this broker.';
    if (err.unauthorized) return 'Not authorized: the broker refused the credentials.';
    return err.message;
  }
  return String(err?.message || err);
}
