// The operator's actions on a subscription (docs/console.md#acting-from-the-console):
// retry now, pause and resume, purge, and redrive what was given up. Each
// reads the broker's numbers afresh, asks first with them ("Purge 12
// waiting events?"), calls the action's route and says its answer in
// words. A button is offered only where its action applies.

import {h} from './dom.js';
import * as api from './api.js';
import * as f from './format.js';
import {ask} from './confirm.js';
import {describe} from './widgets.js';

// say puts an action's outcome in the result line: kind "ok", "error",
// "muted" or "" (under way).
function say(out, kind, text) {
  out.className = 'result ' + kind;
  out.dataset.state = kind || 'busy';
  out.textContent = text;
}

// run is one action from click to answer: question() returns the dialog's
// content, or a string when there is nothing to do; call() calls the
// route; answer(a) puts its answer in words.
async function run(ctx, btn, out, {label, question, call, answer}) {
  btn.disabled = true;
  say(out, '', 'Counting…');
  try {
    const q = await question();
    if (typeof q === 'string') {
      say(out, 'muted', q);
      return;
    }
    say(out, '', '');
    if (!(await ask(q))) {
      say(out, 'muted', 'Cancelled: nothing was done.');
      return;
    }
    say(out, '', 'Working…');
    const a = await call();
    say(out, 'ok', answer(a || {}));
    ctx.done();
  } catch (e) {
    say(out, 'error', failure(e, label));
  } finally {
    btn.disabled = false;
  }
}

// failure says why an action did not happen: the broker's own message,
// with what kind of refusal it was.
function failure(e, label) {
  if (!(e instanceof api.ApiError)) return String(e?.message || e);
  if (e.network) return e.message;
  if (e.unknownAction) return `This broker does not offer ${label}: it answered ${e.status}` + (e.code ? ' ' + e.code : '') + '. ' + e.message;
  if (e.status === 409) return 'Refused: ' + e.message;
  if (e.status === 503) return 'Not now: ' + e.message;
  return describe(e) + (e.code ? ` (${e.code})` : '');
}

// fresh reads the subscription again, so a question carries the numbers
// of now, not of the last refresh.
const fresh = (ctx) => api.get(ctx.base);

const were = (n) => (n === 1 ? 'was' : 'were');

// subscriptionActions is the bar under the subscription's title: Retry now
// (only while events wait to be retried), Pause or Resume, Purge (only
// while events wait). update(sub) shows the buttons that apply to sub.
export function subscriptionActions(ctx) {
  const out = h('span', {class: 'result', role: 'status', 'aria-live': 'polite'});
  const retry = h('button', {type: 'button', class: 'btn primary', text: 'Retry now', 'data-action': 'retryNow', hidden: true});
  const pause = h('button', {type: 'button', class: 'btn', text: 'Pause delivery', 'data-action': 'pause', hidden: true});
  const resume = h('button', {type: 'button', class: 'btn primary', text: 'Resume delivery', 'data-action': 'resume', hidden: true});
  const purge = h('button', {type: 'button', class: 'btn danger-outline', text: 'Purge waiting events…', 'data-action': 'purge', hidden: true});

  retry.addEventListener('click', () => run(ctx, retry, out, {
    label: 'Retry now',
    question: async () => {
      const s = await fresh(ctx);
      const n = f.delayed(s);
      const queue = f.isQueue(s);
      const probation = s.properties?.deliveryStatus?.probationUntil;
      if (!n && probation) {
        return {
          title: `End the probation of ${ctx.sub} now?`,
          lines: ['No event waits in back-off. New events are sent at once instead of after the probation, ' + f.ago(probation) + '.'],
          ok: 'End probation',
        };
      }
      if (!n) return queue ? 'Nothing to retry: no event is delayed.' : 'Nothing to retry: no event waits in back-off.';
      const last = await atLastAttempt(ctx, s);
      return {
        title: queue ? `Make ${f.plural(n, 'delayed event')} available now?` : `Retry ${f.plural(n, 'event')} now?`,
        lines: [
          queue ?
            `The ${n === 1 ? 'event' : n + ' events'} released with a delay become available to receivers at once.` :
            `The ${n === 1 ? 'event' : n + ' events'} waiting in back-off for ${ctx.sub} ${n === 1 ? 'is' : 'are'} sent at once, each keeping its attempt count.`,
          last ? `${last} of them ${last === 1 ? 'is' : 'are'} at ${last === 1 ? 'its' : 'their'} last allowed attempt.` : '',
          queue ? '' : 'A forced attempt never uses up an event\'s last allowed attempt: if the endpoint still fails, nothing is given up because of this.',
        ],
        ok: queue ? 'Make available' : 'Retry now',
      };
    },
    call: () => api.action(ctx.base, 'retryNow'),
    answer: (a) => {
      const n = a.moved ?? 0;
      const queue = f.isQueue(ctx.get());
      let text = `${f.plural(n, 'event')} made ${queue ? 'available' : 'ready'}.`;
      // atLastAttempt: how many of those were at their last attempt.
      if (typeof a.atLastAttempt === 'number' && n) {
        text += a.atLastAttempt ? ` ${a.atLastAttempt} ${were(a.atLastAttempt)} at ${a.atLastAttempt === 1 ? 'its' : 'their'} last attempt, which a forced attempt does not use up.` :
          ' None was at its last attempt.';
      }
      return text;
    },
  }));

  pause.addEventListener('click', () => run(ctx, pause, out, {
    label: 'pause',
    question: async () => {
      const s = await fresh(ctx);
      const queue = f.isQueue(s);
      const ds = s.properties?.deliveryStatus || {};
      const w = f.waiting(s);
      const busy = queue ? ds.locked : ds.inFlight;
      return {
        title: `Pause delivery to ${ctx.sub}?`,
        lines: [
          queue ? 'Receivers get no event from it until you resume.' : `Nothing is sent to ${f.destination(s).where || 'its destination'} until you resume.`,
          `${f.plural(w, 'event')} ${w === 1 ? 'waits' : 'wait'} now; new ones keep arriving and wait too, within the broker's bounds and their time to live.`,
          busy ? `The ${f.plural(busy, 'event')} ${queue ? 'locked by receivers' : 'in flight'} finish as they are.` : '',
        ],
        ok: 'Pause',
      };
    },
    call: () => api.action(ctx.base, 'pause'),
    answer: (s) => {
      const since = s?.properties?.deliveryStatus?.pausedSince;
      return 'Paused' + (since ? ' since ' + f.stamp(since) : '') + ': nothing is ' + (f.isQueue(ctx.get()) ? 'handed out' : 'sent') + ' until you resume.';
    },
  }));

  resume.addEventListener('click', () => run(ctx, resume, out, {
    label: 'resume',
    question: async () => {
      const s = await fresh(ctx);
      const ds = s.properties?.deliveryStatus || {};
      const w = f.waiting(s);
      const later = f.delayed(s);
      const now = w - later;
      let line;
      if (!w) line = 'No event waits: new ones are delivered as they arrive.';
      else if (f.isQueue(s)) line = `${f.plural(now, 'event')} become${now === 1 ? 's' : ''} available to receivers at once` + (later ? `, ${later} delayed when their delay ends.` : '.');
      else line = `${f.plural(now, 'ready event')} ${now === 1 ? 'is' : 'are'} sent at once` + (later ? `, ${later} in back-off at their next attempt${ds.nextAttemptTime ? ' (the first ' + f.ago(ds.nextAttemptTime) + ')' : ''}.` : '.');
      return {title: `Resume delivery to ${ctx.sub}?`, lines: [line], ok: 'Resume'};
    },
    call: () => api.action(ctx.base, 'resume'),
    answer: (s) => {
      const w = f.waiting(s);
      return 'Resumed: delivery goes on' + (s?.properties ? ` (${f.plural(w, 'event')} waiting).` : '.');
    },
  }));

  purge.addEventListener('click', () => run(ctx, purge, out, {
    label: 'purge',
    question: async () => {
      const s = await fresh(ctx);
      const queue = f.isQueue(s);
      const ds = s.properties?.deliveryStatus || {};
      const w = f.waiting(s);
      if (!w) return 'Nothing to purge: no event waits.';
      const busy = queue ? ds.locked : ds.inFlight;
      return {
        title: `Purge ${f.plural(w, 'waiting event')}?`,
        lines: [
          `${w === 1 ? 'It is' : 'They are'} removed from ${ctx.sub} for good, and counted as dropped with the reason purged.`,
          busy ? `The ${f.plural(busy, 'event')} ${queue ? 'locked by receivers' : 'in flight'} ${busy === 1 ? 'is' : 'are'} not touched.` : '',
        ],
        ok: `Purge ${f.plural(w, 'event')}`,
        danger: true,
      };
    },
    call: () => api.action(ctx.base, 'purge'),
    answer: (a) => `${f.plural(a.purged ?? 0, 'event')} purged.`,
  }));

  const el = h('div', {class: 'actions', hidden: true}, retry, pause, resume, purge, out);
  return {
    el,
    update(s) {
      el.hidden = !s;
      if (!s) return;
      const paused = s.properties?.deliveryStatus?.state === 'Paused';
      retry.hidden = paused || !(f.delayed(s) > 0 || s.properties?.deliveryStatus?.probationUntil);
      pause.hidden = paused;
      resume.hidden = !paused;
      purge.hidden = !(f.waiting(s) > 0);
    },
  };
}

// atLastAttempt counts, from a peek, the delayed events whose next attempt
// is their last allowed one; 0 when the page cannot tell.
async function atLastAttempt(ctx, s) {
  try {
    const a = await api.get(ctx.base + '/events', {top: 1000});
    let n = 0;
    for (const it of a?.value || []) {
      const d = it.deliveryState || {};
      const limit = f.attemptLimit(s, d.maxAttempts);
      if (!limit || !/^backoff|^scheduled$|^delayed$/.test(d.queue || '')) continue;
      if ((d.attempts || 0) + 1 >= limit) n++;
    }
    return n;
  } catch {
    return 0;
  }
}

// redriveWords says what a redrive does.
const redriveWords = (ctx, n) => `${n === 1 ? 'It goes' : 'They go'} back on ${ctx.sub} only, not on the topic's other subscriptions, ` +
  'as if newly published: attempt count 0, time to live counted from now.';

// moved puts a redrive's answer in words: how many moved, and each that did
// not with the broker's reason.
function moved(ctx, a) {
  const n = a.moved ?? 0;
  let text = `${f.plural(n, 'event')} moved back to ${ctx.sub}.`;
  const not = Array.isArray(a.notMoved) ? a.notMoved : [];
  if (not.length) {
    text += ` ${f.plural(not.length, 'event')} not moved: ` +
      not.slice(0, 5).map((x) => (x?.id ?? '?') + (x?.reason ? ' (' + x.reason + ')' : '')).join(', ') +
      (not.length > 5 ? ` and ${not.length - 5} more` : '') + '.';
  }
  return text;
}

// givenUpList reads the given-up list, up to listTop entries, for the
// numbers of a question.
const listTop = 1000;
const givenUpList = (ctx) => api.get(ctx.base + '/failures', {top: listTop});

// redrivable says whether a redrive would move the given-up entry x: not
// redriven already, and its event kept.
export const redrivable = (x) => !x.redrivenTime && x.event !== undefined && x.event !== null;

// howMany is n for a question, "at least n" when the list read came back
// full (more may be kept than it holds).
const howMany = (a, n, word) => ((a?.value || []).length >= listTop ? 'at least ' : '') + f.plural(n, word);

// redriveTools is the given-up list's toolbar: redrive all of it, or what
// was given up since a time. update(answer) reads the list as last shown.
export function redriveTools(ctx) {
  const out = h('span', {class: 'result', role: 'status', 'aria-live': 'polite'});
  const all = h('button', {type: 'button', class: 'btn primary', text: 'Redrive all', 'data-action': 'redrive-all'});
  const since = h('input', {type: 'datetime-local', step: 1, class: 'since', id: 'redrive-since', title: 'local time'});
  const sinceBtn = h('button', {type: 'button', class: 'btn', text: 'Redrive since', 'data-action': 'redrive-since'});

  all.addEventListener('click', () => run(ctx, all, out, {
    label: 'redrive',
    question: async () => {
      const a = await givenUpList(ctx);
      const list = a?.value || [];
      const n = list.filter(redrivable).length;
      if (!n) return list.length ? 'Nothing to redrive: every event listed was redriven already, or was too large to keep.' : 'Nothing to redrive: the given-up list is empty.';
      const gone = list.length < listTop ? (a.total ?? list.length) - list.length : 0;
      return {
        title: `Redrive ${howMany(a, n, 'given-up event')}?`,
        lines: [redriveWords(ctx, n),
          gone > 0 ? `${f.plural(gone, 'event')} given up on earlier ${gone === 1 ? 'is' : 'are'} no longer kept, and cannot be redriven.` : ''],
        ok: `Redrive ${howMany(a, n, 'event')}`,
      };
    },
    call: () => api.action(ctx.base, 'redrive', {}),
    answer: (a) => moved(ctx, a),
  }));

  sinceBtn.addEventListener('click', () => run(ctx, sinceBtn, out, {
    label: 'redrive',
    question: async () => {
      const t = localTime(since.value);
      if (!t) return 'Choose the time first: events given up since then are redriven.';
      const a = await givenUpList(ctx);
      const n = (a?.value || []).filter((x) => redrivable(x) && Date.parse(x.time) >= t.getTime()).length;
      if (!n) return `Nothing to redrive: no event given up since ${f.stamp(t)} waits to be redriven.`;
      return {
        title: `Redrive ${howMany(a, n, 'event')} given up since ${f.stamp(t)}?`,
        lines: [redriveWords(ctx, n)],
        ok: `Redrive ${howMany(a, n, 'event')}`,
      };
    },
    call: () => api.action(ctx.base, 'redrive', {givenUpSince: localTime(since.value).toISOString()}),
    answer: (a) => moved(ctx, a),
  }));

  const buttons = h('span', {class: 'tools', hidden: true}, all,
    h('span', {class: 'since-group'}, h('label', {for: 'redrive-since', class: 'muted', text: 'or those given up since'}), since, sinceBtn));
  // The answer stays when the list empties and its buttons go.
  const el = h('div', {class: 'tools redrive'}, out, buttons);
  return {
    el,
    out,
    update(a) {
      const list = a?.value || [];
      const n = list.filter(redrivable).length;
      buttons.hidden = !n;
      all.textContent = `Redrive all (${f.num(n)})`;
      if (!since.value && list.length) {
        // The oldest listed, to the second: the whole list, to start from.
        since.value = inputTime(new Date(Math.min(...list.map((x) => Date.parse(x.time) || Date.now()))));
      }
    },
  };
}

// redriveOne is a given-up row's own button; its answer goes to out, the
// list's result line, which outlives the row. The rows are made again on
// every refresh: ctx.redriving keeps the ids whose redrive is under way, so
// that the new row's button stays disabled until it ends.
export function redriveOne(ctx, item, out) {
  ctx.redriving ??= new Set();
  const btn = h('button', {type: 'button', class: 'btn small-btn', text: 'Redrive', 'data-action': 'redrive-one',
    title: 'Put this event back on the subscription'});
  btn.disabled = ctx.redriving.has(item.eventId);
  btn.addEventListener('click', async () => {
    ctx.redriving.add(item.eventId);
    try {
      await redriveIt();
    } finally {
      ctx.redriving.delete(item.eventId);
    }
  });
  const redriveIt = () => run(ctx, btn, out, {
    label: 'redrive',
    question: async () => ({
      title: `Redrive event ${item.eventId}?`,
      lines: [redriveWords(ctx, 1), item.reason ? `It was given up on ${f.ago(item.time)}: ${item.reason}.` : ''],
      ok: 'Redrive 1 event',
    }),
    call: () => api.action(ctx.base, 'redrive', {ids: [item.eventId]}),
    answer: (a) => moved(ctx, a),
  });
  return btn;
}

// inputTime is d as a datetime-local input holds it: local time, to the
// second.
function inputTime(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// localTime reads a datetime-local input's value (local time); null when
// empty or invalid.
function localTime(v) {
  if (!v) return null;
  const d = new Date(v);
  return isNaN(d) ? null : d;
}
