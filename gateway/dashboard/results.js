// A session's results on the page: charts of emotions, faces, pitch, level, sentiment and
// custom events on one time axis, the transcript and the list of events. History read from
// the API and live payloads from the WebSocket are put in the same way.
import { Chart, TimeAxis, dots, line } from './charts.js';
import { find, row } from './dom.js';
import { clock, fixed, percent } from './format.js';

/** The emotion keys of the API, each with its colour on the charts. */
const EMOTIONS = [
  ['exaltation', '#e8a202'],
  ['focus', '#4c78a8'],
  ['impact', '#e45756'],
  ['seriousness', '#8c564b'],
  ['lowEnergy', '#72b7b2'],
  ['aversion', '#54a24b'],
  ['overwhelming', '#b279a2'],
];
const SOURCE_COLOURS = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#b279a2', '#72b7b2', '#9d755d', '#bab0ac'];

/** Where the faces chart marks an interval read with reduced effort: along its top, on a scale of its own. */
const REDUCED_MARK = 0.95;

/** VADER's usual cut-offs on the compound score. */
const tone = (compound) => (compound >= 0.05 ? 'positive' : compound <= -0.05 ? 'negative' : 'neutral');

/** Rows kept in time order, whichever order they arrive in. */
class TimeTable {
  #body;
  #empty;
  #times = [];

  constructor(section) {
    this.#body = find(section, 'tbody');
    this.#empty = find(section, '.empty');
  }

  add(time, cells) {
    let at = this.#times.length;
    while (at > 0 && this.#times[at - 1] > time) at--;
    this.#times.splice(at, 0, time);
    this.#body.insertBefore(row([clock(time), ...cells]), this.#body.children[at] ?? null);
    this.#empty.hidden = true;
  }

  clear() {
    this.#times = [];
    this.#body.replaceChildren();
    this.#empty.hidden = false;
  }
}

export class Results {
  axis = new TimeAxis();
  #charts;
  #transcript;
  #eventList;
  #sources = new Map(); // sensor source id -> {name, format, band (text sources: where their dots sit)}
  #reduced = new Map(); // interval start -> seconds in it whose faces were read with reduced effort
  #effortNote;
  #events = new Map(); // time -> (source id -> data): what the events chart shows

  constructor(root) {
    const at = (name) => find(root, `[data-chart="${name}"]`);
    const { axis } = this;
    this.#charts = {
      emotions: new Chart(at('emotions'), axis, {
        series: EMOTIONS.map(([key, colour]) => line(key, colour, { value: (u, v) => (v === null ? '--' : percent(v)) })),
        y: { format: percent, range: [0, 1] },
      }),
      faces: new Chart(at('faces'), axis, {
        series: [
          line('faces', '#4c78a8'),
          dots('analysis reduced', '#e45756', {
            scale: 'reduced',
            value: (u, v, si, idx) => (v === null ? '--' : `${this.#reduced.get(u.data[0][idx]) ?? 0} s`),
          }),
        ],
        y: { format: (v) => (Number.isInteger(v) ? String(v) : ''), range: (min, max) => [0, Math.max(2, Math.ceil(max ?? 0) + 1)] },
        scales: { reduced: { range: [0, 1] } },
      }),
      pitch: new Chart(at('pitch'), axis, { series: [line('pitch (Hz)', '#f58518')], y: { format: (v) => String(Math.round(v)) } }),
      level: new Chart(at('level'), axis, { series: [line('level (dBFS)', '#54a24b')], y: { format: (v) => String(Math.round(v)) } }),
      sentiment: new Chart(at('sentiment'), axis, {
        series: [line('positive', '#54a24b'), line('neutral', '#9aa3af'), line('negative', '#e45756')],
        y: { format: (v) => fixed(v, 1), range: [0, 1] },
      }),
      events: new Chart(at('events'), axis, { series: [], y: { format: (v) => String(v) }, scales: { text: { range: [0, 1] } } }),
    };
    this.#transcript = new TimeTable(find(root, '.transcript'));
    this.#eventList = new TimeTable(find(root, '.event-list'));
    this.#effortNote = find(root, '.effort-note');
  }

  /** The session's sensor sources (from its `sources`), so events are named and drawn by format. */
  setSources(sources) {
    for (const source of sources) {
      if (source.type === 'generic_sensor') this.#sources.set(source.id, { name: source.name, format: source.format });
    }
    this.#drawEvents();
  }

  /**
   * One interval: the share of face-seconds dominated by each emotion, the faces seen, and the
   * seconds whose faces the host read with reduced effort (`reducedEffortSeconds`).
   */
  emotionsAt(x, shares, faces, reducedSeconds = 0) {
    this.#charts.emotions.put(x, EMOTIONS.map(([key]) => shares[key] ?? 0));
    if (reducedSeconds > 0) this.#reduced.set(x, reducedSeconds);
    else this.#reduced.delete(x);
    this.#charts.faces.put(x, [faces, reducedSeconds > 0 ? REDUCED_MARK : null]);
    this.#showEffort();
  }

  /** Says under the faces chart how much of what is shown was analysed with reduced effort. */
  #showEffort() {
    let seconds = 0;
    for (const value of this.#reduced.values()) seconds += value;
    this.#effortNote.hidden = seconds === 0;
    this.#effortNote.textContent = seconds === 0 ? '' : `Analysis reduced in ${seconds} s: the host was loaded and read these faces on a smaller picture, so small faces may be missing there.`;
  }

  /** `frequency` null when no second of the interval was voiced. */
  audioAt(x, frequency, level) {
    this.#charts.pitch.put(x, [frequency]);
    this.#charts.level.put(x, [level]);
  }

  sentimentAt(x, { positive, neutral, negative }) {
    this.#charts.sentiment.put(x, [positive, neutral, negative]);
  }

  /** Transcript segments: `{start, end, text, sentiments: {positive, neutral, negative, compound}}`. */
  addSegments(segments) {
    for (const { start, text, sentiments } of segments) {
      const label = document.createElement('span');
      label.className = `tone tone-${tone(sentiments.compound)}`;
      label.textContent = tone(sentiments.compound);
      label.title = `compound ${fixed(sentiments.compound, 2)}; positive ${fixed(sentiments.positive, 2)}, neutral ${fixed(sentiments.neutral, 2)}, negative ${fixed(sentiments.negative, 2)}`;
      this.#transcript.add(start, [text, label]);
    }
  }

  hasSource(id) {
    return this.#sources.has(id);
  }

  /** Custom events: `{time, source, data}`. */
  addEvents(events) {
    let newSource = false;
    for (const { time, source, data } of events) {
      if (!this.#sources.has(source)) {
        // A source the session did not list when read: named by its id.
        this.#sources.set(source, { name: source, format: typeof data === 'number' ? 'scalar' : 'text' });
        newSource = true;
      }
      if (!this.#events.has(time)) this.#events.set(time, new Map());
      this.#events.get(time).set(source, data);
      this.#eventList.add(time, [this.#sources.get(source).name, String(data)]);
      if (!newSource) this.#putEvents(time);
    }
    if (newSource) this.#drawEvents();
  }

  clear() {
    for (const chart of Object.values(this.#charts)) chart.clear();
    this.#reduced.clear();
    this.#showEffort();
    this.#events.clear();
    this.#transcript.clear();
    this.#eventList.clear();
  }

  destroy() {
    this.axis.destroy();
  }

  /** One series per source: scalars at their value, each text source as dots on a band of its own, its text in the legend. */
  #drawEvents() {
    const ids = [...this.#sources.keys()];
    const texts = ids.filter((id) => this.#sources.get(id).format === 'text');
    for (const id of texts) this.#sources.get(id).band = (texts.indexOf(id) + 1) / (texts.length + 1);
    this.#charts.events.setSeries(
      ids.map((id, i) => {
        const colour = SOURCE_COLOURS[i % SOURCE_COLOURS.length];
        const { name, format } = this.#sources.get(id);
        if (format !== 'text') return dots(name, colour);
        const text = (u, v, si, idx) => (v === null ? '--' : String(this.#events.get(u.data[0][idx])?.get(id) ?? ''));
        return dots(name, colour, { scale: 'text', value: text });
      }),
    );
    for (const time of this.#events.keys()) this.#putEvents(time);
  }

  /** The events chart's point at `time`: a value for each source that has an event then. */
  #putEvents(time) {
    const at = this.#events.get(time);
    const values = [...this.#sources].map(([id, source]) => {
      if (!at.has(id)) return null;
      return source.format === 'text' ? source.band : at.get(id);
    });
    this.#charts.events.put(time, values);
  }
}
