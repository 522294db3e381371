// The overview: every topic and every subscription, failing ones first.

import {h, fill, panel, notice} from './dom.js';
import * as api from './api.js';
import * as f from './format.js';
import {sparkline, fromAPI} from './chart.js';
import {badge, chip, subscriptionTable, tile, topicHref, subHref} from './widgets.js';

// HISTORY_EVERY is how often the topics' histories are read again: they
// change every 5 seconds.
const HISTORY_EVERY = 5000;

export function mount(root) {
  const alert = h('div', {class: 'alert', hidden: true, role: 'status'});
  const summary = h('div', {class: 'tiles summary'});
  const topicsBody = h('div', {class: 'topics'});
  const subsBody = h('div', {class: 'table-wrap'});
  fill(root,
    h('div', {class: 'page-head'}, h('h1', {text: 'Overview'})),
    alert, summary,
    panel('Subscriptions', {id: 'subscriptions'}, subsBody),
    panel('Topics', {id: 'topics'}, topicsBody));
  const rates = new f.Rates();
  const histories = new Map();
  let historyAt = 0;

  async function refresh() {
    const topics = (await api.get('/topics')) || [];
    const lists = await Promise.all(topics.map((t) =>
      api.get(api.path('topics', t.name, 'eventSubscriptions')).catch(() => [])));
    const subs = lists.flat().filter((x) => x && x.properties);
    if (Date.now() - historyAt >= HISTORY_EVERY) {
      historyAt = Date.now();
      await Promise.all(topics.map(async (t) => {
        try {
          const a = await api.optional(api.path('topics', t.name, 'history'));
          histories.set(t.name, a === undefined ? null : fromAPI(a));
        } catch {
          histories.set(t.name, null);
        }
      }));
    }
    renderAlert(alert, subs);
    renderSummary(summary, topics, subs);
    fill(subsBody, subs.length ? subscriptionTable(subs, rates) :
      notice('muted', topics.length ? 'No subscriptions yet.' : 'No subscriptions: create a topic first.'));
    fill(topicsBody, topics.length ? topics.map((t) => topicCard(t, subs, histories.get(t.name))) : emptyTopics());
  }

  return {refresh};
}

function renderAlert(el, subs) {
  const failing = subs.filter((s) => f.failing(f.state(s)));
  el.hidden = failing.length === 0;
  if (!failing.length) return;
  fill(el, h('strong', {text: failing.length === 1 ? '1 subscription is failing: ' : failing.length + ' subscriptions are failing: '}),
    failing.slice(0, 5).map((s, i) => [i ? ', ' : '', h('a', {href: subHref(s.properties.topic, s.name), text: s.properties.topic + ' / ' + s.name})]),
    failing.length > 5 ? ' and ' + (failing.length - 5) + ' more' : '');
}

// renderSummary shows the broker's figures: besides what happens now,
// the totals since it started, so a subscription that delivered a burst
// does not read like one that never received anything.
function renderSummary(el, topics, subs) {
  const failing = subs.filter((s) => f.failing(f.state(s))).length;
  const queued = subs.reduce((n, s) => n + (f.queued(s) || 0), 0);
  const total = (get) => {
    const v = subs.map((s) => get(s.properties.deliveryStatus));
    return !v.length || v.some((x) => typeof x === 'number') ? f.num(v.reduce((n, x) => n + (x || 0), 0)) : '—';
  };
  const received = topics.map((t) => t.properties?.stats?.received);
  const given = total((ds) => f.givenUp(ds));
  fill(el,
    tile('Topics', f.num(topics.length)),
    tile('Subscriptions', f.num(subs.length)),
    tile('Failing', f.num(failing), null, failing ? 'bad' : 'ok'),
    tile('Queued events', f.num(queued)),
    tile('Received', !received.length || received.some((x) => typeof x === 'number') ? f.num(received.reduce((n, x) => n + (x || 0), 0)) : '—', 'events, all topics'),
    tile('Delivered', total((ds) => ds?.delivered), 'events, all subscriptions'),
    tile('Failed attempts', total((ds) => ds?.failedAttempts)),
    tile('Given up', given, null, given !== '—' && given !== '0' ? 'warn' : ''));
}

function topicCard(t, subs, history) {
  const mine = subs.filter((s) => s.properties.topic === t.name)
    .sort((a, b) => f.rank(a) - f.rank(b) || a.name.localeCompare(b.name));
  const stats = t.properties?.stats;
  let spark;
  let now = '—';
  if (history && Array.isArray(history.series.received)) {
    const perSecond = history.series.received.map((v) => (v || 0) / history.intervalSeconds);
    spark = sparkline(perSecond, 'events per second, last 15 minutes');
    // The last point is the interval under way: the one before is whole.
    now = f.rate(perSecond[perSecond.length - 2] ?? perSecond[perSecond.length - 1]);
  } else {
    spark = h('div', {class: 'spark-none', text: history === null ? 'history not available' : '…'});
  }
  return h('article', {class: 'card topic'},
    h('div', {class: 'card-head'},
      h('a', {class: 'name', href: topicHref(t.name), text: t.name}),
      chip(t.properties?.inputSchema || 'EventGridSchema', 'schema')),
    h('div', {class: 'spark-row'}, spark,
      h('div', {class: 'spark-now'}, h('span', {class: 'big', text: now}), h('span', {class: 'muted', text: 'events/s'}))),
    h('div', {class: 'card-stats'},
      h('span', {}, h('span', {class: 'muted', text: 'received '}), f.num(stats?.received)),
      h('span', {}, h('span', {class: 'muted', text: 'unmatched '}), f.num(stats?.unmatched)),
      stats?.lastReceivedTime ? h('span', {}, h('span', {class: 'muted', text: 'last '}), f.ago(stats.lastReceivedTime)) : null),
    mine.length ?
      h('ul', {class: 'mini-subs'}, mine.map((s) => h('li', {},
        badge(f.state(s)), ' ', h('a', {href: subHref(t.name, s.name), text: s.name}),
        h('span', {class: 'muted', text: ' → ' + f.destination(s).kind})))) :
      h('p', {class: 'muted small', text: 'No subscriptions: events published here are counted as unmatched.'}));
}

function emptyTopics() {
  return h('div', {class: 'empty'},
    h('p', {text: 'No topics yet. Create one over the API, for example:'}),
    h('pre', {class: 'json', text: 'PUT /topics/sensors?api-version=' + api.API_VERSION + '\n{"properties": {"inputSchema": "EventGridSchema"}}'}),
    h('p', {class: 'muted', text: 'or declare it in desired_config; see docs/api.md and docs/live-config.md.'}));
}
