// The "Send test event" form: an event valid for the topic's input schema,
// published through the normal publish route like any client's.

import {h, fill} from './dom.js';
import * as api from './api.js';
import {clock} from './format.js';
import {describe} from './widgets.js';

// uuid works outside secure contexts too (a gateway reached over plain
// HTTP), where crypto.randomUUID is missing.
export function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

// sample is a valid event for schema.
export function sample(schema) {
  const id = uuid();
  const time = new Date().toISOString();
  const data = {message: 'Hello from the edgegrid console', sentAt: time};
  if (schema === 'CloudEventSchemaV1_0') {
    return {specversion: '1.0', id, source: '/edgegrid/console', type: 'edgegrid.console.test',
      subject: 'console/test', time, datacontenttype: 'application/json', data};
  }
  if (schema === 'CustomEventSchema') {
    return {id, eventType: 'edgegrid.console.test', subject: 'console/test', eventTime: time, data};
  }
  return {id, eventType: 'edgegrid.console.test', subject: 'console/test', eventTime: time, dataVersion: '1.0', data};
}

// request is how a value from the form is published on a topic of schema.
export function request(schema, value) {
  if (schema === 'CloudEventSchemaV1_0') {
    return Array.isArray(value) ?
      {type: 'application/cloudevents-batch+json', body: value} :
      {type: 'application/cloudevents+json', body: value};
  }
  return {type: 'application/json', body: Array.isArray(value) ? value : [value]};
}

export function form(topic, schema) {
  const text = h('textarea', {class: 'code', rows: 14, wrap: 'off', spellcheck: 'false', 'aria-label': 'Event JSON'});
  const result = h('p', {class: 'result', role: 'status'});
  const reset = () => {
    text.value = JSON.stringify(sample(schema), null, 2);
  };
  reset();
  const send = h('button', {type: 'submit', class: 'btn primary', text: 'Send'});
  const el = h('form', {class: 'send'},
    h('p', {class: 'muted small', text: `A valid ${schema} event, published with POST /topics/${topic}/events like any client's. Edit it freely.`}),
    text,
    h('div', {class: 'tools'}, send, h('button', {type: 'button', class: 'btn', text: 'New event', onclick: () => {
      reset();
      fill(result);
    }})),
    result);
  el.addEventListener('submit', async (e) => {
    e.preventDefault();
    let value;
    try {
      value = JSON.parse(text.value);
    } catch (err) {
      result.className = 'result error';
      result.textContent = 'Not valid JSON: ' + err.message;
      return;
    }
    const req = request(schema, value);
    send.disabled = true;
    try {
      await api.call('POST', api.path('topics', topic, 'events'), {
        headers: {'Content-Type': req.type}, body: JSON.stringify(req.body),
      });
      const n = Array.isArray(req.body) ? req.body.length : 1;
      result.className = 'result ok';
      result.textContent = `Accepted at ${clock(new Date())}: ${n === 1 ? '1 event' : n + ' events'}. The form holds a new one.`;
      reset();
    } catch (err) {
      result.className = 'result error';
      result.textContent = 'Refused: ' + (err.code ? err.code + ': ' : '') + describe(err);
    } finally {
      send.disabled = false;
    }
  });
  return el;
}
