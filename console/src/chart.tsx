import { useEffect, useId, useRef } from 'react';
import uPlot, { type AlignedData, type Options } from 'uplot';
import 'uplot/dist/uPlot.min.css';

const plain = (value: number) => String(value);

/** The charts' colors (the Console's own, each ≥ 3:1 on white), for their series and axes. */
export const PALETTE = {
  blue: '#1f5fbf',
  green: '#1a7f37',
  orange: '#b54708',
  red: '#b42318',
  grey: '#5b6572',
  purple: '#6941c6',
};

export interface ChartSeries {
  label: string;
  color: string;
  /** One value per period (hour or day); null: nothing to show then. */
  values: (number | null)[];
}

/** How each period is named in the figures' table: hours in the reader's time zone, days as UTC days. */
const PERIODS = {
  hour: {
    heading: 'Hour',
    name: (at: string) => new Date(at).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }),
  },
  day: {
    heading: 'Day',
    name: (at: string) => new Date(at).toLocaleDateString([], { dateStyle: 'medium', timeZone: 'UTC' }),
  },
};

/**
 * A chart of hourly or daily figures (uPlot: canvas, ~20 KB gzip), inside a figure whose
 * caption names it and whose table gives the same figures to screen readers and to anyone
 * who wants the numbers (the canvas is hidden from assistive technology).
 */
export function Chart({
  title,
  times,
  period = 'hour',
  series,
  kind,
  format = plain,
  least,
}: {
  title: string;
  /** The start of each period (ISO). */
  times: string[];
  /** Hours are drawn in the reader's time zone; days are UTC days, drawn as such. */
  period?: 'hour' | 'day';
  series: ChartSeries[];
  /** Stacked bars (counts), or lines (durations). */
  kind: 'stacked' | 'lines';
  format?: (value: number) => string;
  /** The least top of the value axis (default: 4 for bars, 1 for lines — counts and milliseconds). */
  least?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const captionId = useId();
  useEffect(() => {
    const target = box.current;
    if (!target) {
      return;
    }
    const xs = times.map((at) => Date.parse(at) / 1000);
    const top = least ?? (kind === 'stacked' ? 4 : 1);
    // Stacked: each series drawn as the sum of itself and those after it, largest first,
    // so each bar shows its own part; the legend shows the series' own value.
    const drawn =
      kind === 'stacked'
        ? series.map((_, i) => xs.map((__, h) => series.slice(i).reduce((sum, s) => sum + (s.values[h] ?? 0), 0)))
        : series.map((s) => s.values);
    const bars = uPlot.paths.bars!({ size: [0.7, 40], gap: 1 });
    const options: Options = {
      width: Math.max(200, target.clientWidth),
      height: 180,
      cursor: { drag: { x: false, y: false } },
      ...(period === 'day' ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') } : {}),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, top)] } },
      axes: [
        { stroke: PALETTE.grey, grid: { stroke: '#eef0f3' } },
        { stroke: PALETTE.grey, grid: { stroke: '#eef0f3' }, size: 72, values: (_u, ticks) => ticks.map(format) },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color,
          fill: kind === 'stacked' ? s.color : undefined,
          width: kind === 'stacked' ? 0 : 2,
          paths: kind === 'stacked' ? bars : undefined,
          points: { show: kind === 'lines' },
          spanGaps: false,
          value: (_u: uPlot, _v: number | null, _si: number, index: number | null) => {
            const own = index === null ? null : series[i].values[index];
            return own === null || own === undefined ? '—' : format(own);
          },
        })),
      ],
    };
    const chart = new uPlot(options, [xs, ...drawn] as AlignedData, target);
    chart.root.setAttribute('aria-hidden', 'true');
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(200, target.clientWidth), height: 180 }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, period, series, kind, format, least]);
  return (
    <figure className="chart" aria-labelledby={captionId}>
      <figcaption id={captionId}>{title}</figcaption>
      <div ref={box} className="chart-canvas" />
      <details>
        <summary>
          Figures<span className="visually-hidden"> of {title}</span>
        </summary>
        <table>
          <caption className="visually-hidden">
            {title}, per {period}
          </caption>
          <thead>
            <tr>
              <th scope="col">{PERIODS[period].heading}</th>
              {series.map((s) => (
                <th key={s.label} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {times.map((at, h) => (
              <tr key={at}>
                <th scope="row">{PERIODS[period].name(at)}</th>
                {series.map((s) => (
                  <td key={s.label}>{s.values[h] === null ? '—' : format(s.values[h]!)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
