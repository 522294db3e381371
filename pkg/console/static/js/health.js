// Whether what the page shows is current: when the broker last answered,
// whether it answers now, and whether it restarted while the page was open.
//
// The broker keeps nothing across a restart, and its API names no start
// time or instance, so a restart is read from what it does show: a total
// (a topic's received events, a subscription's delivered and failed
// attempts) that went back, or, after a time without answers, none of the
// topics the page saw before.

import {h, fill} from './dom.js';
import {stamp} from './format.js';

export class Health {
  // el is where the notices go; onChange(stale) is told when the page's
  // data stops or starts being current.
  constructor(el, onChange) {
    this.el = el;
    this.onChange = onChange;
    this.lastAnswer = null; // Date of the last answer
    this.downSince = null; // Date of the first failure since then
    this.wasDown = false; // an outage since /topics last answered
    this.totals = new Map(); // resource id → its total
    this.topics = null; // names of the topics /topics last listed
    this.restart = null; // {at, why}
    this.dismissed = false;
  }

  // reach records whether a call reached the broker.
  reach(ok) {
    const was = Boolean(this.downSince);
    if (ok) {
      this.lastAnswer = new Date();
      this.downSince = null;
    } else if (!this.downSince) {
      this.downSince = new Date();
      this.wasDown = true;
    }
    if (was === Boolean(this.downSince)) return; // nothing to show anew
    this.onChange(Boolean(this.downSince));
    this.render();
  }

  // answer reads a GET's answer for totals that went back. A list's
  // answer also forgets the totals of its members that are gone: one
  // deleted and created again over the API counts from 0, which is no
  // restart.
  answer(path, value) {
    const items = Array.isArray(value) ? value : [value];
    if (Array.isArray(value)) this.forgetGone(path, new Set(value.map((it) => it?.id)));
    for (const it of items) {
      const total = totalOf(it);
      if (total === undefined || !it.id) continue;
      const prev = this.totals.get(it.id);
      this.totals.set(it.id, total);
      if (prev !== undefined && total < prev) this.restarted(`${it.name} counted ${prev} and now counts ${total}`);
    }
    if (path === '/topics' && Array.isArray(value)) {
      const names = new Set(value.map((t) => t?.name));
      if (this.wasDown && this.topics && this.topics.size && ![...this.topics].some((n) => names.has(n))) {
        this.restarted(value.length ? 'none of the topics it had before is there' : 'it has no topics any more');
      }
      this.topics = names;
      this.wasDown = false;
    }
  }

  // forgetGone drops the totals of the members of the list at path (ids
  // that end with path, '/' and a name) that are not in ids.
  forgetGone(path, ids) {
    for (const id of this.totals.keys()) {
      const at = id.lastIndexOf(path + '/');
      if (at >= 0 && !id.slice(at + path.length + 1).includes('/') && !ids.has(id)) this.totals.delete(id);
    }
  }

  restarted(why) {
    this.restart = {at: new Date(), why};
    this.dismissed = false;
    this.totals.clear();
    this.render();
  }

  render() {
    const out = [];
    if (this.downSince) {
      out.push(h('div', {class: 'health down', 'data-health': 'down'},
        h('strong', {text: 'The broker does not answer'}),
        ` (since ${stamp(this.downSince)}). What this page shows is ` +
        (this.lastAnswer ? `from its last answer, at ${stamp(this.lastAnswer)},` : 'not from the broker,') +
        ' and may no longer be true. The page keeps asking.'));
    }
    if (this.restart && !this.dismissed) {
      out.push(h('div', {class: 'health restarted', 'data-health': 'restarted'},
        h('strong', {text: 'The broker has restarted'}),
        ` (seen at ${stamp(this.restart.at)}: ${this.restart.why}). It keeps nothing across a restart: ` +
        'the events that waited, the given-up lists, the history and the totals start again from nothing, ' +
        'and only the topics and subscriptions declared in its configuration are back. ',
        h('button', {type: 'button', class: 'btn small-btn', text: 'Dismiss', onclick: () => {
          this.dismissed = true;
          this.render();
        }})));
    }
    fill(this.el, out);
  }
}

// totalOf is what only grows while the broker runs: a topic's received and
// refused publishes, a subscription's delivered and failed attempts (not
// what it gave up on, which a redrive may take back).
function totalOf(r) {
  const p = r?.properties;
  if (!p) return undefined;
  if (p.stats && typeof p.stats.received === 'number') return p.stats.received + (p.stats.publishRequestsRefused || 0);
  const ds = p.deliveryStatus;
  if (!ds || typeof ds.delivered !== 'number') return undefined;
  return ds.delivered + (ds.failedAttempts || 0);
}
