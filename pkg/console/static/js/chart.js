// Charts of the broker's history, drawn as SVG: a sparkline for a topic's
// events per second, bars of counts per interval, lines of latency. The
// drawing stretches to its box (viewBox with preserveAspectRatio none);
// labels are HTML around it, so text never stretches with it.

import {h, s} from './dom.js';
import {num} from './format.js';

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function svgBox(n, height, cls) {
  return s('svg', {class: cls, viewBox: `0 0 ${n} ${height}`, preserveAspectRatio: 'none', role: 'img'});
}

// points turns values into "x,y" pairs for a polyline; null values break
// the line into pieces.
function pieces(values, top, height) {
  const out = [];
  let cur = [];
  values.forEach((v, i) => {
    if (v === null || v === undefined) {
      if (cur.length) out.push(cur);
      cur = [];
      return;
    }
    cur.push(`${i + 0.5},${(height - (Math.min(v, top) / top) * height).toFixed(2)}`);
  });
  if (cur.length) out.push(cur);
  return out;
}

// sparkline draws values as a filled line, with its label (for screen
// readers and the tooltip).
export function sparkline(values, label) {
  const H = 30;
  const top = niceMax(Math.max(0, ...values.filter((v) => v !== null)));
  const svg = svgBox(values.length, H, 'spark');
  svg.appendChild(s('title', {text: label}));
  for (const p of pieces(values, top, H)) {
    const first = p[0].split(',')[0];
    const last = p[p.length - 1].split(',')[0];
    svg.appendChild(s('polygon', {class: 'spark-fill', points: `${first},${H} ${p.join(' ')} ${last},${H}`}));
    svg.appendChild(s('polyline', {class: 'spark-line', points: p.join(' ')}));
  }
  return svg;
}

// timeAxis labels a chart's 15 minutes.
function timeAxis(history) {
  const n = history.n;
  const minutes = Math.round((n * history.intervalSeconds) / 60);
  return h('div', {class: 'axis'}, h('span', {text: minutes + ' min ago'}), h('span', {text: 'now'}));
}

function legend(series) {
  return h('div', {class: 'legend'}, series.map((x) => h('span', {class: 'key ' + x.cls, text: x.name})));
}

// timeOf names the interval i covers, for tooltips.
function timeOf(history, i) {
  const t = new Date(history.start + i * history.intervalSeconds * 1000);
  return t.toLocaleTimeString();
}

// bars draws counts per interval as stacked bars, one colour per series,
// scaled to the largest stack.
export function bars(history, series, unit) {
  const H = 100;
  const n = history.n;
  const totals = Array.from({length: n}, (_, i) => series.reduce((t, x) => t + (x.values[i] || 0), 0));
  const top = niceMax(Math.max(0, ...totals));
  const svg = svgBox(n, H, 'chart-svg');
  for (let i = 0; i < n; i++) {
    let base = H;
    for (const x of series) {
      const v = x.values[i] || 0;
      if (!v) continue;
      const hgt = (Math.min(v, top) / top) * H;
      base -= hgt;
      const r = s('rect', {class: 'bar ' + x.cls, x: i + 0.1, y: base.toFixed(2), width: 0.8, height: hgt.toFixed(2)});
      r.appendChild(s('title', {text: `${timeOf(history, i)}: ${num(v)} ${x.name.toLowerCase()}`}));
      svg.appendChild(r);
    }
  }
  return frame(history, series, top, unit, svg);
}

// lines draws series as lines over the intervals.
export function lines(history, series, unit) {
  const H = 100;
  const n = history.n;
  const all = series.flatMap((x) => x.values.filter((v) => v !== null && v !== undefined));
  const top = niceMax(Math.max(0, ...all));
  const svg = svgBox(n, H, 'chart-svg');
  for (const x of series) {
    for (const p of pieces(x.values, top, H)) {
      if (p.length === 1) {
        const [cx, cy] = p[0].split(',');
        svg.appendChild(s('circle', {class: 'dot ' + x.cls, cx, cy, r: 0.8}));
      } else {
        svg.appendChild(s('polyline', {class: 'line ' + x.cls, points: p.join(' ')}));
      }
    }
  }
  return frame(history, series, top, unit, svg);
}

function frame(history, series, top, unit, svg) {
  return h('figure', {class: 'chart'},
    legend(series),
    h('div', {class: 'plot'},
      h('div', {class: 'scale'}, h('span', {text: num(top) + ' ' + unit}), h('span', {text: '0'})),
      h('div', {class: 'area'}, svg)),
    timeAxis(history));
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
