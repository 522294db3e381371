// Charts of the broker's history, drawn as SVG: a sparkline for a topic's
// events per second, bars of counts per interval, latency ranges and a
// level line. A chart is drawn at its box's size in pixels, and again when
// the box changes size: the 180 intervals of 5 s are grouped into as many
// bars as the width holds (at least MIN_BAR pixels each), so a bar is
// never a hairline, and the scale says what one bar counts ("2 events per
// 20 s"). Labels are HTML around the drawing.

import {h, s} from './dom.js';
import {num, plural, span} from './format.js';

// MIN_BAR is the narrowest bar, in CSS pixels.
const MIN_BAR = 7;
// MIN_SEGMENT is the lowest a count above zero is drawn, in pixels, so
// that 5 failures beside 1,000 deliveries still show.
const MIN_SEGMENT = 3;

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

// GROUPS are the numbers of 5-second intervals a bar may cover: 5, 10,
// 15, 20 and 30 s, 1, 2, 3 and 5 min, so that a scale reads "per 20 s",
// never "per 35 s".
const GROUPS = [1, 2, 3, 4, 6, 12, 24, 36, 60];

// groupSize is how many intervals one bar covers so that the bars of n
// intervals fit width pixels, MIN_BAR each.
export function groupSize(n, width) {
  const fit = Math.max(1, Math.floor(width / MIN_BAR));
  for (const g of GROUPS) if (Math.ceil(n / g) <= fit) return g;
  return Math.ceil(n / fit);
}

// buckets groups n intervals by g, from the end: the last bucket ends with
// the interval under way, the first may be short. Each bucket is [from, to)
// in interval indices.
export function buckets(n, g) {
  const out = [];
  for (let to = n; to > 0; to -= g) out.push([Math.max(0, to - g), to]);
  return out.reverse();
}

// sum, maxOf and meanOf fold the values of a bucket; null when it holds
// none (a latency nobody measured).
const sum = (v, [a, b]) => {
  let t = 0;
  for (let i = a; i < b; i++) t += v[i] || 0;
  return t;
};
function fold(v, [a, b], f) {
  const xs = [];
  for (let i = a; i < b; i++) if (v[i] !== null && v[i] !== undefined) xs.push(v[i]);
  return xs.length ? f(xs) : null;
}
const maxOf = (v, r) => fold(v, r, (xs) => Math.max(...xs));
const meanOf = (v, r) => fold(v, r, (xs) => xs.reduce((a, b) => a + b, 0) / xs.length);

// sparkline draws values as a filled line, with its label (for screen
// readers and the tooltip). It stretches to its box: it has no scale.
export function sparkline(values, label) {
  const H = 30;
  const top = niceMax(Math.max(0, ...values.filter((v) => v !== null)));
  const svg = s('svg', {class: 'spark', viewBox: `0 0 ${values.length} ${H}`, preserveAspectRatio: 'none', role: 'img'});
  svg.appendChild(s('title', {text: label}));
  const p = values.map((v, i) => `${i + 0.5},${(H - (Math.min(v || 0, top) / top) * H).toFixed(2)}`);
  if (p.length) {
    svg.appendChild(s('polygon', {class: 'spark-fill', points: `0.5,${H} ${p.join(' ')} ${values.length - 0.5},${H}`}));
    svg.appendChild(s('polyline', {class: 'spark-line', points: p.join(' ')}));
  }
  return svg;
}

// timeOf names the time interval i starts at, for tooltips.
function timeOf(history, i) {
  return new Date(history.start + i * history.intervalSeconds * 1000).toLocaleTimeString();
}

function rangeText(history, r) {
  return timeOf(history, r[0]) + '–' + timeOf(history, r[1]);
}

// chart is a figure whose drawing is made by draw(width, height) whenever
// its box gets a size; draw returns the SVG's children and the scale's top
// label.
function chart(history, legendItems, draw, cls = '') {
  const topLabel = h('span');
  const area = h('div', {class: 'area'});
  const fig = h('figure', {class: 'chart ' + cls},
    h('div', {class: 'legend'}, legendItems),
    h('div', {class: 'plot'}, h('div', {class: 'scale'}, topLabel, h('span', {text: '0'})), area),
    h('div', {class: 'axis'}, h('span', {text: Math.round((history.n * history.intervalSeconds) / 60) + ' min ago'}), h('span', {text: 'now'})));
  let drawn = '';
  let ro = null;
  const render = () => {
    if (ro && !area.isConnected) {
      // The view made a new chart in its place: this one is done.
      ro.disconnect();
      return;
    }
    const w = Math.floor(area.clientWidth);
    const ht = Math.floor(area.clientHeight);
    if (!w || !ht || drawn === w + 'x' + ht) return;
    drawn = w + 'x' + ht;
    const out = draw(w, ht);
    topLabel.textContent = out.top;
    area.replaceChildren(s('svg', {class: 'chart-svg', viewBox: `0 0 ${w} ${ht}`, width: w, height: ht, role: 'img'}, out.nodes));
  };
  if (typeof ResizeObserver === 'function') {
    ro = new ResizeObserver(render);
    ro.observe(area);
  }
  return fig;
}

function legend(series) {
  return series.map((x) => h('span', {class: 'key ' + x.cls, text: x.name}));
}

// bars draws counts per interval as stacked bars, one colour per series,
// noun naming what is counted ("event"). Intervals are grouped to fit the
// width; a count above zero is never drawn thinner than MIN_SEGMENT.
export function bars(history, series, noun = 'event') {
  return chart(history, legend(series), (w, ht) => {
    const g = groupSize(history.n, w);
    const bs = buckets(history.n, g);
    const bw = w / bs.length;
    const gap = Math.max(1, Math.round(bw * 0.2));
    const totals = bs.map((r) => series.reduce((t, x) => t + sum(x.values, r), 0));
    const top = niceMax(Math.max(0, ...totals));
    const nodes = [];
    bs.forEach((r, i) => {
      let base = ht;
      for (const x of series) {
        const v = sum(x.values, r);
        if (!v) continue;
        const hgt = Math.max(MIN_SEGMENT, (Math.min(v, top) / top) * ht);
        base -= hgt;
        nodes.push(s('rect', {class: 'bar ' + x.cls, x: (i * bw + gap / 2).toFixed(1), y: Math.max(0, base).toFixed(1),
          width: Math.max(1, bw - gap).toFixed(1), height: hgt.toFixed(1)},
        s('title', {text: `${rangeText(history, r)}: ${num(v)} ${x.name.toLowerCase()}`})));
      }
    });
    return {nodes, top: plural(top, noun) + ' per ' + span(g * history.intervalSeconds)};
  });
}

// latency draws, per group of intervals that has deliveries, a range from
// the median (a dot) to the 99th percentile (a tick): nothing where no
// request ended, and no line joining groups across a gap. With no request
// at all it says so.
export function latency(history, p50, p99) {
  const items = [
    h('span', {class: 'key s-p50', text: 'median (dot)'}),
    h('span', {class: 'key s-p99', text: '99th percentile (top)'}),
  ];
  return chart(history, items, (w, ht) => {
    const g = groupSize(history.n, w);
    const bs = buckets(history.n, g);
    const bw = w / bs.length;
    const pts = bs.map((r) => ({r, lo: meanOf(p50, r), hi: maxOf(p99, r)}));
    const all = pts.flatMap((p) => [p.lo, p.hi]).filter((v) => v !== null);
    if (!all.length) {
      return {top: '', nodes: [s('text', {class: 'chart-empty', x: w / 2, y: ht / 2, 'text-anchor': 'middle',
        text: 'No delivery request ended in these 15 minutes'})]};
    }
    const top = niceMax(Math.max(...all));
    const y = (v) => (ht - 4 - (Math.min(v, top) / top) * (ht - 8)).toFixed(1);
    const nodes = [];
    pts.forEach((p, i) => {
      if (p.lo === null && p.hi === null) return;
      const cx = i * bw + bw / 2;
      const half = Math.min(4, bw / 3);
      const lo = p.lo ?? p.hi;
      const hi = p.hi ?? p.lo;
      nodes.push(s('g', {class: 'lat'},
        s('title', {text: `${rangeText(history, p.r)}: median ${fmtMs(lo)}, 99th percentile ${fmtMs(hi)}`}),
        s('line', {class: 'lat-range', x1: cx.toFixed(1), x2: cx.toFixed(1), y1: y(lo), y2: y(hi)}),
        s('line', {class: 'lat-top', x1: (cx - half).toFixed(1), x2: (cx + half).toFixed(1), y1: y(hi), y2: y(hi)}),
        s('circle', {class: 'lat-dot', cx: cx.toFixed(1), cy: y(lo), r: Math.min(3, Math.max(1.5, bw / 3)).toFixed(1)})));
    });
    return {nodes, top: fmtMs(top)};
  }, 'latency');
}

function fmtMs(v) {
  return v < 10 ? (Math.round(v * 10) / 10) + ' ms' : num(Math.round(v)) + ' ms';
}

// level draws a level over time (how many events were held) as a line
// of each group's highest value.
export function level(history, name, cls, values, noun = 'event') {
  return chart(history, legend([{name, cls}]), (w, ht) => {
    const g = groupSize(history.n, w);
    const bs = buckets(history.n, g);
    const bw = w / bs.length;
    const vs = bs.map((r) => maxOf(values, r) ?? 0);
    const top = niceMax(Math.max(0, ...vs));
    const pts = vs.map((v, i) => `${(i * bw + bw / 2).toFixed(1)},${(ht - 2 - (Math.min(v, top) / top) * (ht - 4)).toFixed(1)}`);
    const nodes = [s('polyline', {class: 'line ' + cls, points: pts.join(' ')})];
    vs.forEach((v, i) => {
      if (!v) return;
      nodes.push(s('rect', {class: 'hit', x: (i * bw).toFixed(1), y: 0, width: bw.toFixed(1), height: ht},
        s('title', {text: `${rangeText(history, bs[i])}: at most ${plural(v, noun)}`})));
    });
    return {nodes, top: plural(top, noun)};
  });
}

// fromAPI reads a history answer: its start as a time in ms, its interval
// and its number of points.
export function fromAPI(answer) {
  const series = answer?.series || {};
  const n = Math.max(0, ...Object.values(series).map((v) => (Array.isArray(v) ? v.length : 0)));
  return {
    start: Date.parse(answer?.start) || Date.now() - n * 5000,
    intervalSeconds: answer?.intervalSeconds || 5,
    n,
    series,
  };
}
