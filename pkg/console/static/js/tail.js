// A live list fed by one of the broker's event streams: the topic's live
// tail or a subscription's delivery outcomes. The broker ends a stream
// cleanly after a while (1.5 times its request timeout); the list then
// opens it again at once, without a word, as EventSource would. It
// reconnects after a failure, says when the route is not available, and
// keeps at most MAX items, so a busy topic cannot grow the page without
// bound.

import {h, fill} from './dom.js';
import * as api from './api.js';
import {describe, expandable} from './widgets.js';

const MAX = 500;
const RETRY_MS = 2000;
const BUSY_RETRY_MS = 10000;
// A stream that ends cleanly sooner than this after it opened is opened
// again after RETRY_MS, not at once: a broker (or a proxy) that ends every
// stream straight away is not asked again in a tight loop.
const SHORT_MS = 1000;

// Tail reads the stream at path. row(item) builds an item's summary:
// {head: spans, meta: a line of text below them}; events maps the stream's
// event names to how an item is made from its data (a function returning
// the value to keep, or null to skip it).
export class Tail {
  constructor({path, row, events, empty}) {
    this.path = path;
    this.row = row;
    this.events = events;
    this.emptyText = empty;
    this.items = [];
    this.open = new WeakSet();
    this.paused = false;
    this.held = 0;
    this.filter = '';
    this.ctrl = null;
    this.stopped = false;
    this.status = h('span', {class: 'live-status', text: 'connecting…'});
    this.counter = h('span', {class: 'muted small'});
    this.list = h('ul', {class: 'rows tail'});
    this.pauseBtn = h('button', {type: 'button', class: 'btn', text: 'Pause', onclick: () => this.togglePause()});
    const filter = h('input', {type: 'search', class: 'filter', placeholder: 'Filter (any text in the event)', 'aria-label': 'Filter'});
    filter.addEventListener('input', () => {
      this.filter = filter.value.trim().toLowerCase();
      this.render();
    });
    const clear = h('button', {type: 'button', class: 'btn', text: 'Clear', onclick: () => {
      this.items = [];
      this.render();
    }});
    this.tools = h('div', {class: 'tools'}, this.status, this.pauseBtn, clear);
    this.bar = h('div', {class: 'tail-bar'}, filter, this.counter);
    this.buttons = [this.pauseBtn, clear];
    this.el = h('div', {class: 'tail-box'}, this.bar, this.list);
    this.render();
  }

  start() {
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    if (this.ctrl) this.ctrl.abort();
  }

  setStatus(text, cls) {
    this.status.textContent = text;
    this.status.className = 'live-status ' + (cls || '');
  }

  async loop() {
    let opened = 0;
    while (!this.stopped) {
      this.ctrl = new AbortController();
      // A stream that ended cleanly is opened again with the status as it
      // was: nothing was missed that the page could show.
      if (!opened) this.setStatus('connecting…');
      try {
        await api.stream(this.path, {
          signal: this.ctrl.signal,
          onOpen: () => {
            opened = Date.now();
            this.counter.dataset.error = '';
            this.showCount();
            this.setStatus(this.paused ? 'paused' : 'live', this.paused ? 'paused' : 'live');
          },
          onEvent: (name, data, id) => this.receive(name, data, id),
        });
        if (this.stopped || this.ended) return;
        if (this.reopen(opened)) continue;
        opened = 0;
        this.setStatus('reconnecting…', 'warn');
      } catch (e) {
        if (this.stopped || e.name === 'AbortError') return;
        // A stream that ran a while and was cut rather than ended (its
        // last bytes lost) is opened again at once too: if the broker has
        // gone, that attempt says so.
        if (!(e instanceof api.ApiError) && this.reopen(opened)) continue;
        opened = 0;
        if (e instanceof api.ApiError && e.unavailable) {
          this.setStatus('not available', 'off');
          this.bar.hidden = true;
          for (const b of this.buttons) b.hidden = true;
          fill(this.list, h('li', {class: 'notice unavailable', text: 'Not available on this broker: it does not serve GET ' + this.path + '.'}));
          return;
        }
        if (e instanceof api.ApiError && e.unauthorized) {
          // The key prompt is up; the view starts afresh with the new key.
          this.setStatus('not authorized', 'off');
          return;
        }
        const busy = e instanceof api.ApiError && e.status === 503;
        this.setStatus(busy ? 'busy: retrying' : 'disconnected: retrying', 'warn');
        // A stream cut off mid-way throws the browser's own words.
        const why = e instanceof api.ApiError ? describe(e) : 'The stream was cut off: the broker stopped, or the network between failed.';
        this.counter.dataset.error = why;
        this.counter.textContent = why;
        // 503 is the broker's cap on open streams: give others time.
        await new Promise((r) => setTimeout(r, busy ? BUSY_RETRY_MS : RETRY_MS));
        continue;
      }
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  // reopen says whether a stream opened at opened (0: it never opened)
  // lasted long enough to be opened again at once, and counts it.
  reopen(opened) {
    if (!opened || Date.now() - opened < SHORT_MS) return false;
    this.status.dataset.reopened = String(Number(this.status.dataset.reopened || 0) + 1);
    return true;
  }

  // receive shows one event of the stream; id, when the broker gives one,
  // is the time it accepted the event, which the page shows rather than
  // the time the page received it, so that every panel agrees.
  receive(name, data, id) {
    if (name === 'deleted') {
      this.ended = true;
      this.setStatus('deleted', 'off');
      this.add({note: 'Deleted: this stream has ended.'});
      return;
    }
    if (name === 'dropped') {
      let n = '';
      try {
        n = JSON.parse(data).count;
      } catch {
        // A count the page cannot read still means items were lost.
      }
      this.add({note: (n ? n + ' items' : 'Items') + ' skipped: this viewer fell behind the broker.'});
      return;
    }
    const make = this.events[name];
    if (!make) return;
    let value;
    try {
      value = JSON.parse(data);
    } catch {
      value = data;
    }
    const item = make(value);
    if (!item) return;
    const at = id ? new Date(id) : null;
    if (at && !isNaN(at)) item.at = item.at || at;
    this.add(item);
  }

  add(item) {
    item.at = item.at || new Date();
    item.text = item.note || JSON.stringify(item.value ?? '').toLowerCase();
    this.items.push(item);
    if (this.items.length > MAX) this.items.splice(0, this.items.length - MAX);
    if (this.paused) {
      this.held++;
      this.showCount();
      return;
    }
    if (this.matches(item)) {
      const empty = this.list.querySelector('.empty-row');
      if (empty) empty.remove();
      this.list.prepend(this.node(item));
      while (this.list.children.length > MAX) this.list.lastChild.remove();
    }
    this.showCount();
  }

  matches(item) {
    return !this.filter || item.text.includes(this.filter);
  }

  node(item) {
    if (item.note) return h('li', {class: 'row note', text: item.note});
    return expandable({...this.row(item), value: item.value, open: this.open.has(item), onToggle: (open) => {
      if (open) this.open.add(item);
      else this.open.delete(item);
    }});
  }

  togglePause() {
    this.paused = !this.paused;
    this.pauseBtn.textContent = this.paused ? 'Resume' : 'Pause';
    this.pauseBtn.classList.toggle('on', this.paused);
    if (!this.paused) {
      this.held = 0;
      this.render();
    }
    this.setStatus(this.paused ? 'paused' : 'live', this.paused ? 'paused' : 'live');
  }

  showCount() {
    if (this.counter.dataset.error) return;
    const shown = this.filter ? this.items.filter((i) => this.matches(i)).length + ' of ' : '';
    this.counter.textContent = shown + this.items.length + (this.items.length === 1 ? ' item' : ' items') +
      (this.held ? ' · ' + this.held + ' new while paused' : '');
  }

  render() {
    const shown = this.items.filter((i) => this.matches(i)).reverse();
    if (!shown.length) fill(this.list, h('li', {class: 'empty-row muted', text: this.items.length ? 'Nothing matches the filter.' : this.emptyText}));
    else fill(this.list, shown.map((i) => this.node(i)));
    this.showCount();
  }
}
