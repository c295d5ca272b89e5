// Line charts as a PNG, drawn by uPlot (the dashboard's charting library) in headless Chromium
// and cut out of the page with a screenshot: no plotting library of its own, no network (the
// page, uPlot and its stylesheet are handed to the browser inline).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export interface Series {
  label: string;
  /** One value per x; null leaves a gap (nothing measured there). */
  values: (number | null)[];
  color: string;
  dashed?: boolean;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** Ascending; every x is also a tick. */
  x: number[];
  series: Series[];
}

export interface PlotOptions {
  /** The project's node_modules, where uPlot is. */
  nodeModules: string;
  chromiumPath: string;
}

const CHART_WIDTH = 620;
const CHART_HEIGHT = 380;

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Draws the charts side by side and writes them to `file` (PNG). */
export async function plotCharts(charts: Chart[], file: string, options: PlotOptions): Promise<void> {
  const dist = join(options.nodeModules, 'uplot', 'dist');
  const [script, css] = await Promise.all([readFile(join(dist, 'uPlot.iife.min.js'), 'utf8'), readFile(join(dist, 'uPlot.min.css'), 'utf8')]);
  const browser = await chromium.launch({ executablePath: options.chromiumPath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: charts.length * (CHART_WIDTH + 40) + 40, height: CHART_HEIGHT + 200 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.setContent(pageHtml(charts, script, css), { waitUntil: 'load' });
    if (errors.length) throw new Error(`the chart page failed: ${errors.join('; ')}`);
    await page.locator('#charts').screenshot({ path: file });
  } finally {
    await browser.close();
  }
}

function pageHtml(charts: Chart[], uplotScript: string, uplotCss: string): string {
  // JSON inside a <script>: "</" is escaped so no value can end the element.
  const data = JSON.stringify(charts).replaceAll('</', '<\\/');
  return `<!doctype html>
<html><head><meta charset="utf-8"><style>${uplotCss}
body { margin: 0; font: 14px sans-serif; background: #fff; }
#charts { display: flex; gap: 40px; padding: 20px; width: max-content; }
h2 { font-size: 16px; margin: 0 0 8px; }
</style></head>
<body><div id="charts"></div>
<script>${uplotScript}</script>
<script>${drawScript(data)}</script>
</body></html>`;
}

// Runs in the page: one uPlot per chart, y from zero, a tick at each x, a point at each value.
function drawScript(data: string): string {
  return `
const charts = ${data};
for (const chart of charts) {
  const box = document.createElement('div');
  const title = document.createElement('h2');
  title.textContent = chart.title;
  box.append(title);
  document.getElementById('charts').append(box);
  new uPlot({
    width: ${CHART_WIDTH},
    height: ${CHART_HEIGHT},
    legend: { live: false },
    cursor: { show: false },
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.15 : 1] } },
    axes: [
      { label: chart.xLabel, splits: () => chart.x },
      { label: chart.yLabel },
    ],
    series: [
      { label: chart.xLabel },
      ...chart.series.map((s) => ({
        label: s.label, stroke: s.color, width: 2, dash: s.dashed ? [8, 5] : undefined,
        points: { show: true, size: 7, fill: s.color },
      })),
    ],
  }, [chart.x, ...chart.series.map((s) => s.values)], box);
}`;
}
