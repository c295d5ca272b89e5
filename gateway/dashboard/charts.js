// Charts of one session's results on a shared time axis (seconds since the session started),
// drawn by uPlot. A chart keeps its points by time, so history read from the API and live
// data from the WebSocket merge second by second; it redraws at most once per frame.
import uPlot from '/vendor/uPlot.esm.js';
import { clock } from './format.js';

let axes = 0;

/** Steps between the time axis's ticks: whole seconds and minutes, as a clock reads them. */
const SECOND_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200];

/** What the charts of one page share: the x range (0 to the latest second seen) and the cursor. */
export class TimeAxis {
  end = 1;
  charts = new Set();
  syncKey = `session-axis-${++axes}`;

  /** Makes room for time `x` on every chart. */
  extend(x) {
    if (x <= this.end) return;
    this.end = x;
    for (const chart of this.charts) chart.schedule();
  }

  destroy() {
    for (const chart of [...this.charts]) chart.destroy();
  }
}

export class Chart {
  #container;
  #axis;
  #options;
  #series;
  #plot;
  #points = new Map(); // x -> one value (or null) per series
  #frame;
  #resize;

  /**
   * `series`: uPlot series options, one per value of a point; `y`: `{format(value), range}`
   * where `range` is `[min, max]` or a function of the data's (min, max); `scales`: more
   * y scales by name, for series that need their own.
   */
  constructor(container, axis, { series, y, scales = {} }) {
    this.#container = container;
    this.#axis = axis;
    this.#options = { y, scales };
    axis.charts.add(this);
    this.#resize = new ResizeObserver(() => this.#plot?.setSize(this.#size()));
    this.#resize.observe(container);
    this.setSeries(series);
  }

  /** Starts again with other series (and no points). */
  setSeries(series) {
    this.#series = series;
    this.#points.clear();
    this.#plot?.destroy();
    const { y, scales } = this.#options;
    this.#plot = new uPlot(
      {
        ...this.#size(),
        series: [{ label: 'time', value: (u, x) => (x === null ? '--' : clock(x)) }, ...series],
        scales: {
          x: { time: false, range: () => [0, this.#axis.end] },
          y: y.range === undefined ? {} : { range: typeof y.range === 'function' ? (u, min, max) => y.range(min, max) : y.range },
          ...scales,
        },
        axes: [
          { values: (u, splits) => splits.map(clock), incrs: SECOND_STEPS, stroke: '#5b6474', grid: { stroke: '#eceff3' } },
          { values: (u, splits) => splits.map(y.format), size: 64, stroke: '#5b6474', grid: { stroke: '#eceff3' } },
        ],
        cursor: { sync: { key: this.#axis.syncKey }, drag: { x: false, y: false } },
        legend: { live: true },
      },
      [[], ...series.map(() => [])],
      this.#container,
    );
    this.#draw();
  }

  /** Sets the values (one per series, null for none) at time `x`. */
  put(x, values) {
    this.#points.set(x, values);
    this.#axis.extend(x);
    this.schedule();
  }

  clear() {
    this.#points.clear();
    this.schedule();
  }

  schedule() {
    this.#frame ??= requestAnimationFrame(() => {
      this.#frame = undefined;
      this.#draw();
    });
  }

  destroy() {
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame);
    this.#resize.disconnect();
    this.#plot.destroy();
    this.#axis.charts.delete(this);
  }

  #draw() {
    const xs = [...this.#points.keys()].sort((a, b) => a - b);
    const columns = this.#series.map((_, i) => xs.map((x) => this.#points.get(x)[i] ?? null));
    this.#plot.setData([xs, ...columns]);
    // What the page shows, where a person or a test can read it.
    this.#container.dataset.points = String(this.#plot.data[0].length);
  }

  #size() {
    return { width: Math.max(240, this.#container.clientWidth), height: 180 };
  }
}

/** A line per series. */
export const line = (label, stroke, extra = {}) => ({ label, stroke, width: 1.5, points: { size: 4 }, ...extra });

/** Points only, no line: for events. */
export const dots = (label, stroke, extra = {}) => ({ label, stroke, paths: () => null, points: { show: true, size: 8, fill: stroke }, ...extra });
