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

const subColumns = ['State', 'Subscription', 'Destination', 'Queued', 'Delivered/s', 'Failures', 'Given up', 'Last error'];

// subscriptionTable lists subscriptions, the most urgent first; rates
// gives delivered/s by subscription.
export function subscriptionTable(subs, rates, showTopic = true) {
  const sorted = [...subs].sort((a, b) =>
    (f.severity[f.state(a)] ?? 9) - (f.severity[f.state(b)] ?? 9) ||
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
  const bad = st === 'Failing' || st === 'OnProbation';
  return h('tr', {class: bad ? 'bad' : ''},
    cell('State', badge(st)),
    cell('Subscription', h('a', {href: subHref(topic, sub.name), class: 'name'},
      showTopic ? h('span', {class: 'muted', text: topic + ' / '}) : null, sub.name)),
    cell('Destination', chip(dest.kind), ' ', h('span', {class: 'host', text: dest.where})),
    cell('Queued', h('span', {class: 'n', text: f.num(f.queued(sub))})),
    cell('Delivered/s', h('span', {class: 'n', text: f.rate(r)})),
    cell('Failures', h('span', {class: 'n' + (ds.failedAttempts > 0 ? ' warn' : ''), text: f.num(ds.failedAttempts)})),
    cell('Given up', h('span', {class: 'n' + (f.givenUp(ds) > 0 ? ' warn' : ''), text: f.num(f.givenUp(ds))})),
    cell('Last error', lastError(ds)));
}

function lastError(ds) {
  if (!ds.lastError) return h('span', {class: 'muted', text: '—'});
  const code = ds.lastFailureStatusCode ? ds.lastFailureStatusCode + ' · ' : '';
  return h('span', {class: 'err', title: ds.lastError, text: code + ds.lastError},
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

// expandable is a list row that shows value as JSON when clicked.
export function expandable(row, value, open, onToggle) {
  const detail = h('div', {class: 'detail', hidden: !open}, jsonBlock(value));
  const item = h('li', {class: 'row' + (open ? ' open' : '')});
  const head = h('button', {class: 'row-head', type: 'button', 'aria-expanded': String(Boolean(open))}, row);
  head.addEventListener('click', () => {
    detail.hidden = !detail.hidden;
    item.classList.toggle('open', !detail.hidden);
    head.setAttribute('aria-expanded', String(!detail.hidden));
    if (onToggle) onToggle(!detail.hidden);
  });
  item.append(head, detail);
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
