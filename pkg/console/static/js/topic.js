// The topic view: its settings and figures, the live tail, Send test event,
// its subscriptions and its history.

import {h, fill, panel, notice} from './dom.js';
import * as api from './api.js';
import * as f from './format.js';
import {bars, fromAPI} from './chart.js';
import {Tail} from './tail.js';
import {form} from './testevent.js';
import {chip, describe, eventSummary, subscriptionTable, tile} from './widgets.js';

export function mount(root, {topic}) {
  const title = h('h1', {text: topic});
  const schemaChip = h('span');
  const tiles = h('div', {class: 'tiles'});
  const sendBody = h('div', {}, notice('muted', 'Loading…'));
  const subsBody = h('div', {class: 'table-wrap'});
  const histBody = h('div', {}, notice('muted', 'Loading…'));
  const tail = new Tail({
    path: api.path('topics', topic, 'events'),
    empty: 'Waiting for events: every event the topic accepts from now on appears here.',
    events: {published: (ev) => ({value: ev})},
    row: (item) => {
      const s = eventSummary(item.value);
      // The event's own time, as every panel shows it; the time the page
      // received it only for an event that has none.
      const t = f.eventTime(item.value);
      return {head: [h('span', {class: 'time', text: f.stamp(t || item.at), title: t ? 'the event\'s time' : 'received by this page'}),
        h('span', {class: 'type', text: s.type || '(no type)'}),
        h('span', {class: 'subject', text: s.subject}),
        h('span', {class: 'id muted', text: s.id})]};
    },
  });
  fill(root,
    h('div', {class: 'page-head'}, h('div', {class: 'crumbs'}, h('a', {href: '#/', text: 'Overview'}), ' / topic'),
      h('div', {class: 'title-row'}, title, schemaChip)),
    tiles,
    h('div', {class: 'cols'},
      panel('Live tail', {id: 'tail', class: 'wide', tools: tail.tools}, tail.el),
      panel('Send test event', {id: 'send', class: 'narrow'}, sendBody)),
    panel('Subscriptions', {id: 'subscriptions'}, subsBody),
    panel('Events received, last 15 minutes', {id: 'history'}, histBody));
  tail.start();
  const rates = new f.Rates();
  let schema = '';
  let historyAt = 0;

  async function refresh() {
    let t;
    try {
      t = await api.get(api.path('topics', topic));
    } catch (e) {
      if (e instanceof api.ApiError && e.status === 404) {
        fill(tiles, notice('error', `Topic "${topic}" does not exist (or no longer does).`));
        return;
      }
      throw e;
    }
    const p = t.properties || {};
    if (p.inputSchema !== schema) {
      schema = p.inputSchema || 'EventGridSchema';
      fill(schemaChip, chip(schema, 'schema'));
      fill(sendBody, form(topic, schema));
    }
    const st = p.stats;
    fill(tiles,
      tile('Received', f.num(st?.received), st?.lastReceivedTime ? 'last ' + f.ago(st.lastReceivedTime) : null),
      tile('Unmatched', f.num(st?.unmatched), 'matched no subscription'),
      tile('Publish requests refused', f.num(st?.publishRequestsRefused)),
      endpointTile(topic, p.endpoint));
    const subs = (await api.get(api.path('topics', topic, 'eventSubscriptions'))) || [];
    fill(subsBody, subs.length ? subscriptionTable(subs, rates, false) :
      notice('muted', 'No subscriptions: events published here are counted as unmatched.'));
    if (Date.now() - historyAt >= 5000) {
      historyAt = Date.now();
      fill(histBody, await history(topic));
    }
  }

  return {refresh, unmount: () => tail.stop()};
}

// endpointTile shows the topic's endpoint as the broker gives it, with
// its host api__publicHost: by default the module's name, eventgridmodule,
// as the IoT Edge module it replaces had. A module's name resolves only for
// the other modules of an IoT Edge device, so the tile says so, and where
// to publish from here: this page's own origin, which is the API's.
function endpointTile(topic, endpoint) {
  let host = '';
  try {
    host = new URL(endpoint).hostname;
  } catch {
    // No endpoint, or not a URL: shown as it is.
  }
  const here = location.origin + api.url(api.path('topics', topic, 'events'));
  const moduleName = host && !/[.:]/.test(host) && host !== 'localhost';
  const hint = host && host !== location.hostname ?
    h('p', {class: 'tile-note hint'}, h('code', {text: host}),
      moduleName ?
        ' is a module\'s name: it resolves only inside IoT Edge, for the other modules of the device. From elsewhere, publish to ' :
        ' is the host the broker names (api__publicHost); this page reaches it at ',
      h('code', {class: 'here', text: here}),
      moduleName ? ', or start the broker with api__publicHost set to a name that resolves.' : '.') :
    null;
  return h('div', {class: 'tile endpoint'}, h('div', {class: 'tile-label', text: 'Endpoint'}), h('code', {text: endpoint || '—'}), hint);
}

async function history(topic) {
  try {
    const a = await api.optional(api.path('topics', topic, 'history'));
    if (a === undefined) return notice('unavailable', 'History is not available on this broker.');
    const hist = fromAPI(a);
    // Unmatched events are among those received: the bars stack the
    // matched and the unmatched, whose sum is what was received.
    const received = hist.series.received || [];
    const unmatched = hist.series.unmatched || [];
    return bars(hist, [
      {name: 'Matched', cls: 's-received', values: received.map((v, i) => Math.max(0, (v || 0) - (unmatched[i] || 0)))},
      {name: 'Unmatched', cls: 's-unmatched', values: unmatched},
    ]);
  } catch (e) {
    return notice('error', describe(e));
  }
}
