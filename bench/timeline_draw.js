#!/usr/bin/env node
// Times the web UI's timeline tab in Debian's headless Chromium (through
// tests/consumers' playwright-core): loads URL#tab=timeline&step=STEP RUNS
// times and prints each load's milliseconds until the page is drawn, with
// the page's own count of events and counter tracks.
// Usage: node bench/timeline_draw.js URL STEP [RUNS]
'use strict';
const path = require('path');

const [url, step, runs = '3'] = process.argv.slice(2);

async function main() {
  const {chromium} = require(path.join(__dirname, '../tests/consumers/node_modules/playwright-core'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({viewport: {width: 1400, height: 900}});
    for (let i = 0; i < Number(runs); ++i) {
      const start = Date.now();
      await page.goto(`${url}?load=${i}#tab=timeline&step=${step}`);
      await page.waitForSelector('#content[data-state="ready"]', {timeout: 300000});
      const ms = Date.now() - start;
      const info = await page.textContent('#timeline-info');
      console.log(`draw ${i + 1}: ${ms} ms (${info})`);
    }
    // Interaction on the drawn page: the wheel redraws the canvas at once
    // (no fetch), so each zoom step's time is one full redraw; 10 in, 10 out.
    const redraw = await page.evaluate(() => {
      const c = document.getElementById('timeline-canvas');
      const r = c.getBoundingClientRect();
      const times = [];
      for (let i = 0; i < 20; ++i) {
        const t0 = performance.now();
        c.dispatchEvent(new WheelEvent('wheel', {deltaY: i < 10 ? -100 : 100,
          clientX: r.left + r.width / 2, clientY: r.top + 40,
          bubbles: true, cancelable: true}));
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return {median: times[10], max: times[19]};
    });
    console.log(`zoom redraw: median ${redraw.median.toFixed(1)} ms, ` +
      `slowest ${redraw.max.toFixed(1)} ms (20 wheel steps)`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.log(`timeline_draw: ${e.message}`);
  process.exit(1);
});
