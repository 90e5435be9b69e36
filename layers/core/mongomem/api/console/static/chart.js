// A small grouped bar chart in inline SVG: memories added, updated and reinforced per day.
import { h, svg } from './dom.js';

export const SERIES = [
  ['added', 'added'],
  ['updated', 'updated'],
  ['reinforced', 'reinforced'],
];

/** The chart for MemoryActivity.days; every bar carries a <title> with its day and count. */
export function activityChart(days) {
  const width = 1000;
  const height = 190;
  const pad = { left: 40, right: 10, top: 12, bottom: 28 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const max = Math.max(1, ...days.flatMap((d) => SERIES.map(([key]) => d[key])));
  const slot = plotW / Math.max(days.length, 1);
  const bar = Math.max(1, (slot - 2) / SERIES.length);
  const y = (v) => pad.top + plotH - (v / max) * plotH;
  const chart = svg('svg', {
    class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `Memories added, updated and reinforced per day over ${days.length} days`, 'data-testid': 'activity-chart',
  });
  for (const tick of [...new Set([0, Math.round(max / 2), max])]) {
    chart.append(
      svg('line', { class: 'grid-line', x1: pad.left, x2: width - pad.right, y1: y(tick), y2: y(tick) }),
      svg('text', { class: 'axis', x: pad.left - 6, y: y(tick), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, String(tick)));
  }
  days.forEach((d, i) => {
    SERIES.forEach(([key], j) => {
      const value = d[key];
      if (!value) return;
      const x = pad.left + i * slot + 1 + j * bar;
      chart.append(svg('rect', { class: `bar bar-${key}`, x, y: y(value), width: bar, height: pad.top + plotH - y(value), 'data-day': d.day, 'data-series': key, 'data-value': value },
        svg('title', {}, `${d.day}: ${value} ${key}`)));
    });
  });
  const label = (i, anchor) => svg('text', { class: 'axis', x: pad.left + i * slot + slot / 2, y: height - 8, 'text-anchor': anchor }, days[i].day);
  if (days.length) chart.append(label(0, 'start'), label(days.length - 1, 'end'));
  const legend = h('ul', { class: 'legend' }, SERIES.map(([key, text]) => h('li', { class: `key-${key}` }, text)));
  return h('figure', { class: 'chart-box' }, chart, legend);
}
