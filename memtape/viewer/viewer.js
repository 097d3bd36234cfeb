// The memtape viewer: rebuilds the projected state of a run at any event from
// the payload's per-event deltas (see memtape/viewer/payload.py), and renders
// it. Every text of the run is user data: it reaches the page through
// textContent only, never as markup, and through `visible`, never raw.
"use strict";

(function () {
  const KEYFRAME_EVERY = 64;
  const EVENT_ROWS_AROUND = 20;
  const LIST_LIMIT = 40;

  // ---- the tape: one run, folded once at load, sought by keyframes ----

  function Tape(data) {
    this.name = data.name;
    this.params = data.params;
    this.turns = data.turns;
    this.facts = data.facts;
    this.rows = data.rows;
    this.frames = data.frames;
    this.ends = data.ends;
    this.length = data.frames.length;
    this.cold = [];
    this.dropped = [];
    this.semantic = [];
    this.procedural = [];
    this.turnAt = [];
    this.coldAt = [];
    this.droppedAt = [];
    this.clearedAt = [];
    this.writtenAt = [];
    this.endings = new Map();
    this.readHistory = new Map();
    this.clock = 0;
    this.folded = 0;
    this.last = this.initial(data.params);
    this.keyframes = [this.last];
    this.foldFrom(1);
    // The probes the run's scenario planted, and where each showed and was lost (computed in
    // Python, as `bench --losses` reports them: memtape/viewer/payload.py).
    this.probes = data.probes || [];
    this.changes = [];
    this.probeChanges = this.probes.map(() => []);
    this.losses = [];
    this.addChanges(data.changes || []);
  }

  // Each change goes to its probe's history; each loss to the positions the strip marks.
  Tape.prototype.addChanges = function (changes) {
    for (const change of changes) {
      const [probe, at, kept] = change;
      this.changes.push(change);
      this.probeChanges[probe].push(change);
      if (!kept) this.losses.push(at);
    }
    // One command's losses come probe by probe, so a chunk's may be out of order.
    this.losses.sort((a, b) => a - b);
  };

  // Where probe `index` stands after event `at`: not yet checked (not due), or kept or lost
  // as its last change by then says, with that change.
  Tape.prototype.probeAt = function (index, at) {
    const history = this.probeChanges[index];
    const found = upperBound(history.map((change) => change[1]), at) - 1;
    if (found < 0) return { standing: "not due", change: null };
    const change = history[found];
    return { standing: change[2] ? "kept" : "lost", change: change };
  };

  Tape.prototype.initial = function (params) {
    return {
      at: 0, clock: 0, tokens: 0, params: params, hot: [], warm: [], recalled: [], gist: "", gistTokens: 0,
      turns: 0, coldLen: 0, droppedLen: 0, active: [], episodes: [], semLen: 0, procLen: 0, blocks: [],
      scores: new Map(),
    };
  };

  // One pass over the deltas from event `first` on: fills the append-only tables, keeps a
  // keyframe every K events and the state after the last one (where appended events go on).
  Tape.prototype.foldFrom = function (first) {
    let state = this.last;
    for (let at = first; at <= this.length; at++) {
      const frame = this.frames[at - 1];
      this.record(frame, at);
      state = applyDelta(state, frame, at, this.rows[at - 1][1] === "TurnAdded");
      if (at % KEYFRAME_EVERY === 0) this.keyframes.push(state);
    }
    this.last = state;
  };

  // Whether `chunk` (live mode: what the server added after some events, its `from` saying
  // how much of each array came before it) starts where this tape ends.
  Tape.prototype.follows = function (chunk) {
    const from = chunk.from;
    return from !== undefined && from.events === this.length && from.steps === this.ends.length &&
      from.turns === this.turns.length && from.facts === this.facts.length &&
      (from.changes === undefined || from.changes === this.changes.length);
  };

  // Appends a chunk that follows on (see `follows`), and folds its events.
  Tape.prototype.extend = function (chunk) {
    for (const [list, added] of [[this.ends, chunk.ends], [this.turns, chunk.turns],
      [this.facts, chunk.facts], [this.rows, chunk.rows], [this.frames, chunk.frames]]) {
      for (const item of added) list.push(item);
    }
    const first = this.length + 1;
    this.length = this.frames.length;
    this.foldFrom(first);
    this.addChanges(chunk.changes || []);
  };

  // The payload this tape holds, as memtape.viewer.payload.run_payload builds it.
  Tape.prototype.payload = function () {
    return {
      name: this.name, params: this.params, ends: this.ends, turns: this.turns,
      facts: this.facts, rows: this.rows, frames: this.frames, probes: this.probes,
      changes: this.changes,
    };
  };

  // What grows with the run is kept once, with the event that added it.
  Tape.prototype.record = function (frame, at) {
    if (this.rows[at - 1][1] === "TurnAdded") this.turnAt.push(at);
    for (const turn of frame.k || []) { this.cold.push(turn); this.coldAt[turn] = at; }
    for (const turn of frame.d || []) { this.dropped.push(turn); this.droppedAt[turn] = at; }
    for (const [turn, text, tokens] of frame.z || []) this.clearedAt[turn] = [at, text, tokens];
    for (const id of frame.f || []) this.writtenAt[id] = at;
    for (const fact of frame.s || []) this.semantic.push(fact);
    for (const rule of frame.p || []) this.procedural.push(rule);
    for (const [id, reads] of frame.r || []) {
      if (!this.readHistory.has(id)) this.readHistory.set(id, []);
      // A read does not move the clock: the clock it happened at is the last one set.
      this.readHistory.get(id).push([at, reads, "c" in frame ? frame.c : this.clock]);
    }
    if ("c" in frame) this.clock = frame.c;
    // An expired fact's ending carries two more: when it was due, and why it expired.
    for (const [id, status, endedAt, by, score, due, reason] of frame.x || []) {
      this.endings.set(id, { at: at, status: status, endedAt: endedAt, by: by, score: score, due: due, reason: reason });
    }
  };

  function shifted(list, change) {
    return list.slice(change[0]).concat(change[1]);
  }

  // The small state after one more event; unchanged parts are shared, never mutated.
  function applyDelta(state, frame, at, isTurn) {
    const next = Object.assign({}, state);
    next.at = at;
    if (isTurn) next.turns = state.turns + 1;
    if ("c" in frame) next.clock = frame.c;
    if ("t" in frame) next.tokens = frame.t;
    if ("h" in frame) next.hot = shifted(state.hot, frame.h);
    if ("w" in frame) next.warm = shifted(state.warm, frame.w);
    if ("q" in frame) next.recalled = frame.q;
    if ("g" in frame) { next.gist = frame.g[0]; next.gistTokens = frame.g[1]; }
    if ("b" in frame) next.blocks = withBlock(state.blocks, frame.b);
    if ("k" in frame) next.coldLen = state.coldLen + frame.k.length;
    if ("d" in frame) next.droppedLen = state.droppedLen + frame.d.length;
    if ("f" in frame) next.active = state.active.concat(frame.f);
    if ("x" in frame) {
      const gone = new Set(frame.x.map((ending) => ending[0]));
      next.active = next.active.filter((id) => !gone.has(id));
    }
    if ("e" in frame) next.episodes = shifted(state.episodes, frame.e);
    if ("s" in frame) next.semLen = state.semLen + frame.s.length;
    if ("p" in frame) next.procLen = state.procLen + frame.p.length;
    if ("P" in frame) next.params = frame.P;
    if ("R" in frame || ("x" in frame && state.scores.size)) next.scores = heldScores(state.scores, frame);
    return next;
  }

  // The memory blocks with one created or rewritten: [label, value, tokens, version, limit],
  // in the order they were created (as memtape.core.state.Window.blocks).
  function withBlock(blocks, block) {
    const at = blocks.findIndex((held) => held[0] === block[0]);
    if (at < 0) return blocks.concat([block]);
    const next = blocks.slice();
    next[at] = block;
    return next;
  }

  // The scores shipped for a policy the page cannot score, id -> [score, factors]: only the
  // active facts' (an ending drops one), updated by the rows that changed (all, on a reset).
  function heldScores(scores, frame) {
    const reset = "R" in frame && frame.R[0] === 1;
    const next = reset ? new Map() : new Map(scores);
    for (const ending of frame.x || []) next.delete(ending[0]);
    for (const [id, score, factors] of "R" in frame ? frame.R[1] : []) next.set(id, [score, factors]);
    return next;
  }

  // The state after `at` events: the keyframe at or before it, then at most K deltas.
  Tape.prototype.stateAt = function (at) {
    let state = this.keyframes[Math.floor(at / KEYFRAME_EVERY)];
    // The deltas this seek applies, at most K whatever the run's length (a test reads it).
    this.folded = at - state.at;
    for (let i = state.at + 1; i <= at; i++) {
      state = applyDelta(state, this.frames[i - 1], i, this.rows[i - 1][1] === "TurnAdded");
    }
    return state;
  };

  // The fact's last read at or before event `at`: [at, reads, clock], or null.
  Tape.prototype.lastReadAt = function (id, at) {
    const history = this.readHistory.get(id);
    let found = null;
    if (!history) return null;
    let low = 0;
    let high = history.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (history[middle][0] <= at) { found = history[middle]; low = middle + 1; } else { high = middle - 1; }
    }
    return found;
  };

  Tape.prototype.readsAt = function (id, at) {
    const read = this.lastReadAt(id, at);
    return read === null ? 0 : read[1];
  };

  Tape.prototype.factFields = function (id, at) {
    const row = this.facts[id - 1];
    return {
      id: id, key: row[0], text: row[1], importance: row[2],
      reads: this.readsAt(id, at), written_at: row[3],
    };
  };

  // ---- the projection: the same data as `memtape show --json` ----

  Tape.prototype.view = function (at) {
    return this.viewOf(this.stateAt(at));
  };

  Tape.prototype.viewOf = function (state) {
    const at = state.at;
    const params = state.params;
    const memory = params.memory;
    return {
      at: at,
      clock: state.clock,
      window: params.budget === null ? null : this.windowView(state),
      store: params.capacity === null ? null : this.storeView(state),
      episodes: memory ? state.episodes.map((e) => ({ id: e[0], text: e[1] })) : null,
      semantic: memory ? this.semantic.slice(0, state.semLen).map(semanticView) : null,
      procedural: memory ? this.procedural.slice(0, state.procLen).map(proceduralView) : null,
    };
  };

  function semanticView(f) { return { key: f[0], text: f[1], importance: f[2], episode: f[3] }; }
  function proceduralView(r) { return { text: r[0], episode: r[1] }; }

  // A turn as HOT holds it after `at` events: cleared in place by then, it reads its placeholder.
  Tape.prototype.turnView = function (turn, at) {
    const row = this.turns[turn - 1];
    const cleared = this.clearedAt[turn];
    const text = cleared && cleared[0] <= at ? cleared[1] : row[1];
    const tokens = cleared && cleared[0] <= at ? cleared[2] : row[2];
    // A turn's calls, answers and pin are shipped only when it has any.
    const calls = row.length > 4 ? row[4] : [], answers = row.length > 4 ? row[5] : [];
    const pinned = row.length > 4 ? row[6] : false;
    return { turn: turn, role: row[0], text: text, tokens: tokens, salient: row[3], calls: calls, answers: answers, pinned: pinned };
  };

  Tape.prototype.windowView = function (state) {
    return {
      tokens: state.tokens,
      budget: state.params.budget,
      over: state.tokens > state.params.budget,
      hot: state.hot.map((turn) => this.turnView(turn, state.at)),
      warm: state.warm.map((w) => ({ turn: w[0], text: w[1], tokens: w[2] })),
      cold: { turns: state.coldLen, gist: state.gist, tokens: state.gistTokens },
      dropped: this.dropped.slice(0, state.droppedLen),
      recalled: state.recalled.map((r) => ({ turn: r[0], text: r[1], tokens: r[2] })),
      // As in Python (memtape/projections/view.py): listed only once a block exists;
      // its characters are code points, as Python counts them.
      ...(state.blocks.length ? { blocks: state.blocks.map(blockView) } : {}),
    };
  };

  function blockView(b) {
    return {
      label: b[0], value: b[1], chars: [...b[1]].length, limit: b[4], tokens: b[2], version: b[3],
      ...(b[5] ? { read_only: true } : {}),
    };
  }

  function blockText(b) {
    return `${b.label} (v${b.version}, ${b.chars}/${b.limit} chars, ${counted(b.tokens, "token")}): ${b.value}`;
  }

  Tape.prototype.storeView = function (state) {
    const retired = [];
    const evicted = [];
    const expired = [];
    for (const [id, end] of this.endings) {
      if (end.at > state.at) continue;
      const fields = this.factFields(id, state.at);
      if (end.status === "retired") {
        retired.push(Object.assign(fields, { retired_at: end.endedAt, superseded_by: end.by }));
      } else if (end.status === "expired") {
        expired.push(Object.assign(fields, { expires_at: end.due, expired_at: end.endedAt, reason: end.reason }));
      } else {
        evicted.push(Object.assign(fields, { score: end.score, evicted_at: end.endedAt }));
      }
    }
    const byId = (a, b) => a.id - b.id;
    const view = {
      capacity: state.params.capacity,
      ranking: this.ranking(state),
      retired: retired.sort(byId),
      evicted: evicted.sort(byId),
    };
    // As in Python: listed only once a fact has expired.
    if (expired.length) view.expired = expired.sort(byId);
    return view;
  };

  // As in Python (memtape/projections/view.py): a fact's own field wins over a factor of
  // the same name (a normalized importance is a factor, not the fact's importance).
  function rankedView(fields, factors, score) {
    return Object.assign({}, factors, fields, { factors: factors, score: score });
  }

  // Ranked by score, highest first; ties to the oldest write, then the lowest id (as
  // store_rules.by_rank orders every forgetting policy's ranking).
  Tape.prototype.ranking = function (state) {
    const scorer = state.params.scorer;
    const facts = state.active.map((id) => this.factFields(id, state.at));
    let scored;
    if (scorer === null) {
      scored = facts.map((fact) => {
        const [score, factors] = state.scores.get(fact.id);
        return { factors: factors, score: score };
      });
    } else {
      const touched = facts.map((fact) => {
        const read = this.lastReadAt(fact.id, state.at);
        return read === null ? fact.written_at : read[2];
      });
      scored = SCORERS[scorer.policy](scorer, facts, state.clock, touched);
    }
    const ranked = facts.map((fact, n) => rankedView(fact, scored[n].factors, scored[n].score));
    return ranked.sort((a, b) => (b.score - a.score) || (a.written_at - b.written_at) || (a.id - b.id));
  };

  // The same arithmetic, in the same order, as memtape/policies/forgetting.py, cache.py
  // (a cache policy's score is one number read off the fact), generative_agents.py and
  // memorybank.py.
  // Each scores the active facts together (a normalized factor depends on all of them):
  // `touched[n]` is when fact n was last touched, its latest read or else its write.
  function oneNumber(name, value) {
    return (params, facts, now, touched) => facts.map((fact, n) => {
      const score = value(fact, touched[n]);
      return { factors: { [name]: score }, score: score };
    });
  }

  // generative_agents.min_max: scaled onto [0, 1]; all 0.5 when they are equal.
  function minMax(values) {
    const low = Math.min(...values);
    const high = Math.max(...values);
    if (high === low) return values.map(() => 0.5);
    return values.map((value) => (value - low) / (high - low));
  }

  const SCORERS = {
    // Math.exp is not libm's exp: a score may differ from Python's by one ulp (the page shows
    // four digits), so two facts whose retentions are one ulp apart could rank swapped.
    "memorybank": (params, facts, now, touched) => facts.map((fact, n) => {
      const elapsed = now - touched[n];
      const strength = 1.0 + fact.reads;
      return { factors: { strength: strength, elapsed: elapsed }, score: Math.exp(-elapsed / strength) };
    }),
    "lru": oneNumber("last_touch", (fact, touched) => touched),
    "lfu": oneNumber("reads", (fact) => fact.reads),
    "fifo": oneNumber("written_at", (fact) => fact.written_at),
    "importance-recency-access": (params, facts, now) => facts.map((fact) => {
      const recency = Math.pow(0.5, (now - fact.written_at) / params.half_life);
      const access = 1 + params.access_boost * fact.reads;
      const decayed = fact.importance * recency;
      return {
        factors: { importance: fact.importance, recency: recency, access: access },
        score: decayed ? decayed * access : 0,
      };
    }),
    "generative-agents": (params, facts, now, touched) => {
      const recency = minMax(facts.map((fact, n) => Math.pow(params.decay, now - touched[n])));
      const importance = minMax(facts.map((fact) => fact.importance));
      return facts.map((fact, n) => ({
        factors: { recency: recency[n], importance: importance[n] },
        score: 0 + params.recency_weight * recency[n] + params.importance_weight * importance[n],
      }));
    },
  };

  // Where a turn sits after `at` events: hot, warm, cold, dropped, or null (not arrived).
  Tape.prototype.tierOf = function (turn, state) {
    if (turn > state.turns) return null;
    if (this.droppedAt[turn] !== undefined && this.droppedAt[turn] <= state.at) return "dropped";
    if (this.coldAt[turn] !== undefined && this.coldAt[turn] <= state.at) return "cold";
    if (state.warm.some((w) => w[0] === turn)) return "warm";
    return "hot";
  };

  Tape.prototype.factStatus = function (id, at) {
    if (!(this.writtenAt[id] <= at)) return null;
    const end = this.endings.get(id);
    return end && end.at <= at ? end.status : "active";
  };

  // ---- rendering: DOM built with textContent only ----

  // The characters memtape.core.visible escapes (its _ACTING class, which
  // tests/test_page.py holds this one to): controls, bidi and other format
  // characters, separators, lone surrogates. A bidi override would reorder what
  // the page shows; the rest print nothing or a box.
  const ACTING = /(?![\t\n])[\0-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\u{110bd}\u{110cd}\u{13430}-\u{13438}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0001}\u{e0020}-\u{e007f}]/gu;

  // `text` with each acting character written as its escape, as `visible` writes it.
  // Newline and tab are kept (the page wraps a text, a dropped turn's keeps its
  // lines), and so are backslashes: the event summaries come visible already.
  function visible(text) {
    return String(text).replace(ACTING, (char) => {
      if (char === "\r") return "\\r";
      const code = char.codePointAt(0);
      if (code < 0x100) return "\\x" + code.toString(16).padStart(2, "0");
      if (code < 0x10000) return "\\u" + code.toString(16).padStart(4, "0");
      return "\\U" + code.toString(16).padStart(8, "0");
    });
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = visible(text);
    return node;
  }

  function fill(parent, children) {
    parent.replaceChildren(...children);
  }

  function number(value, digits) {
    return Number.isInteger(value) ? String(value) : value.toFixed(digits);
  }

  function Panel(root, tape) {
    this.tape = tape;
    this.node = element("section", "panel");
    this.heading = element("h2", "run-name", tape.name);
    this.where = element("p", "where");
    this.meter = element("div", "meter");
    this.track = element("div", "meter-track");
    this.fillBar = element("div", "meter-fill");
    this.budgetLine = element("div", "meter-budget");
    this.meterText = element("p", "meter-text");
    this.track.append(this.fillBar, this.budgetLine);
    this.meter.append(this.track, this.meterText);
    this.tiers = element("div", "tiers");
    this.store = element("div", "store");
    this.memory = element("div", "memory");
    this.node.append(this.heading, this.where, this.meter, this.tiers, this.store, this.memory);
    root.append(this.node);
    this.strip = new MeterStrip(tape);
    this.meter.after(this.strip.root);
    this.openDropped = new Set();
  }

  Panel.prototype.render = function (at) {
    const state = this.tape.stateAt(at);
    const view = this.tape.viewOf(state);
    const step = at === 0 ? 0 : this.tape.rows[at - 1][0];
    const limits = [];
    if (view.window !== null) limits.push(`budget ${view.window.budget}`);
    if (view.store !== null) limits.push(`capacity ${view.store.capacity}`);
    const params = state.params;
    const names = [params.compaction, params.forgetting].filter((name) => name !== null && name !== undefined);
    this.where.textContent = [
      `event ${at} of ${this.tape.length}`, `step ${step} of ${this.tape.ends.length}`, `t=${number(view.clock, 2)}`,
    ].concat(limits, names.length ? [visible(names.join(" + "))] : []).join(" · ");
    this.renderMeter(view.window);
    this.strip.show(at);
    this.renderTiers(view.window);
    this.renderStore(view.store, state.params);
    this.renderMemory(view);
    return view;
  };

  Panel.prototype.renderMeter = function (window_) {
    this.meter.hidden = window_ === null;
    if (window_ === null) return;
    const scale = Math.max(window_.budget * 1.25, window_.tokens, 1);
    this.fillBar.style.width = `${(100 * window_.tokens) / scale}%`;
    this.budgetLine.style.left = `${(100 * window_.budget) / scale}%`;
    this.meter.classList.toggle("over", window_.over);
    this.meter.classList.toggle("under", !window_.over);
    const standing = window_.over ? "over budget" : "within budget";
    this.meterText.textContent = `${window_.tokens}/${window_.budget} tokens · ${standing}`;
  };

  Panel.prototype.renderTiers = function (window_) {
    this.tiers.hidden = window_ === null;
    if (window_ === null) return;
    const cold = window_.cold;
    // The recall tier is shown only while it holds something, as show does.
    const recalled = window_.recalled.length
      ? [section("tier recall", `RECALL · ${counted(window_.recalled.length, "turn")}, verbatim`, listOf(window_.recalled, warmText))]
      : [];
    fill(this.tiers, [
      ...(window_.blocks ? [section("tier blocks", `BLOCKS · ${counted(window_.blocks.length, "block")}, pinned`, listOf(window_.blocks, blockText))] : []),
      section("tier cold", `COLD · ${counted(cold.turns, "turn")} · ${counted(cold.tokens, "token")}`,
        element("p", "gist", cold.gist || "(empty)")),
      section("tier warm", `WARM · ${counted(window_.warm.length, "item")}`, listOf(window_.warm, warmText)),
      section("tier hot", `HOT · ${counted(window_.hot.length, "turn")}, verbatim`, listOf(window_.hot, hotText)),
      ...recalled,
      section("tier dropped", `dropped · ${counted(window_.dropped.length, "turn")}`, this.droppedTurns(window_.dropped)),
    ]);
  };

  // A count and its noun, plural unless the count is 1 (as memtape.core.plural.counted).
  function counted(count, noun) {
    return `${count} ${count === 1 ? noun : noun + "s"}`;
  }

  function section(className, title, body) {
    const node = element("div", className);
    node.append(element("h3", "", title), body);
    return node;
  }

  function warmText(item) {
    return `turn ${item.turn} (${item.tokens}): ${item.text}`;
  }

  function hotText(turn) {
    const salient = turn.salient ? ", salient" : "";
    return `turn ${turn.turn} ${turn.role} (${turn.tokens}${salient}): ${turn.text}`;
  }

  // The latest dropped turns, struck through, each opening on its text (read from the turn
  // table when opened, so nothing is built for a closed one); the earlier ones counted. A turn
  // opened stays open as the user moves, for as long as it is still dropped.
  Panel.prototype.droppedTurns = function (dropped) {
    const strip = element("div", "strip");
    const shown = dropped.slice(-LIST_LIMIT);
    if (shown.length < dropped.length) {
      strip.append(element("span", "more", `… ${dropped.length - shown.length} earlier`));
    }
    for (const turn of shown) strip.append(this.droppedTurn(turn));
    return strip;
  };

  Panel.prototype.droppedTurn = function (turn) {
    const item = element("details", "dropped-item");
    item.dataset.turn = String(turn);
    const summary = element("summary", "");
    summary.append(element("s", "dropped-turn", `turn ${turn}`));
    item.append(summary);
    const opened = () => {
      if (item.querySelector(".dropped-text")) return;
      const row = this.tape.turns[turn - 1];
      const text = element("div", "dropped-text");
      text.append(element("span", "dropped-meta", `${row[0]} · ${counted(row[2], "token")}${row[3] ? " · salient" : ""}`));
      text.append(element("span", "text", row[1]));
      item.append(text);
    };
    item.addEventListener("toggle", () => {
      if (item.open) { this.openDropped.add(turn); opened(); } else { this.openDropped.delete(turn); }
    });
    if (this.openDropped.has(turn)) { item.open = true; opened(); }
    return item;
  };

  // The latest items of a list, each described as text; the earlier ones counted.
  function listOf(items, describe, className) {
    const list = element("ul", className);
    const shown = items.slice(-LIST_LIMIT);
    if (shown.length < items.length) {
      list.append(element("li", "more", `… ${items.length - shown.length} more`));
    }
    for (const item of shown) list.append(element("li", "", describe(item)));
    return list;
  }

  // Only the policies whose score is the product of its factors show it as one;
  // the others list their own factors, whatever they are named, then the score.
  const PRODUCT_SCORES = new Set(["importance-recency-access"]);

  function factorsText(row, policy) {
    const parts = Object.keys(row.factors).map((name) => `${name} ${row.factors[name].toFixed(4)}`);
    if (PRODUCT_SCORES.has(policy)) return `${parts.join(" × ")} = ${row.score.toFixed(4)}`;
    return `${parts.join(" · ")} → ${row.score.toFixed(4)}`;
  }

  function retiredText(fact) {
    const when = number(fact.retired_at, 2);
    const why = fact.superseded_by === null ? "deleted by a judged write" : `superseded by fact ${fact.superseded_by}`;
    return `${fact.key}: ${fact.text} · retired at t=${when}, ${why}`;
  }

  function expiredText(fact) {
    const when = number(fact.expired_at, 2);
    return `${fact.key}: ${fact.text} · expired at t=${when}: ${fact.reason}`;
  }

  function evictedText(fact) {
    const when = number(fact.evicted_at, 2);
    return `${fact.key}: ${fact.text} · evicted at t=${when} over capacity, score ${fact.score.toFixed(4)}`;
  }

  function rankingTable(ranking, policy) {
    const table = element("table", "ranking");
    const head = element("tr");
    for (const title of ["#", "key", "fact", "score", "factors"]) head.append(element("th", "", title));
    table.append(head);
    ranking.slice(0, LIST_LIMIT).forEach((row, index) => {
      const line = element("tr");
      line.append(
        element("td", "", index + 1),
        element("td", "key", row.key),
        element("td", "", row.text),
        element("td", "score", row.score.toFixed(4)),
        element("td", "factors", factorsText(row, policy)),
      );
      table.append(line);
    });
    return table;
  }

  Panel.prototype.renderStore = function (store, params) {
    this.store.hidden = store === null;
    if (store === null) return;
    const rule = params.supersession === "add-only" ? ", add-only (a key may hold several facts)" : "";
    fill(this.store, [
      element("h3", "", `Store · ${store.ranking.length}/${store.capacity} active, ranked by ${params.forgetting} score${rule}`),
      rankingTable(store.ranking, params.forgetting),
      element("h3", "", `Retired · ${store.retired.length}`),
      listOf(store.retired, retiredText, "retired"),
      element("h3", "", `Evicted · ${store.evicted.length}`),
      listOf(store.evicted, evictedText, "evicted"),
      ...(store.expired ? [element("h3", "", `Expired · ${store.expired.length}`), listOf(store.expired, expiredText, "expired")] : []),
    ]);
  };

  Panel.prototype.renderMemory = function (view) {
    this.memory.hidden = view.episodes === null;
    if (view.episodes === null) return;
    const semantic = (f) => `${f.key}: ${f.text} (importance ${f.importance}, episode ${f.episode})`;
    fill(this.memory, [
      element("h3", "", `Episodes pending · ${view.episodes.length}`),
      listOf(view.episodes, (e) => `${e.id}: ${e.text}`),
      element("h3", "", `Semantic facts · ${view.semantic.length}`),
      listOf(view.semantic, semantic),
      element("h3", "", `Procedural rules · ${view.procedural.length}`),
      listOf(view.procedural, (r) => `${r.text} (episode ${r.episode})`),
    ]);
  };

  // ---- the meter strip: the window's tokens after every event, over the run or a part ----

  const STRIP_HEIGHT = 52;
  const STRIP_SNAP = 4;
  const STRIP_MARK = 9;
  const STRIP_LOSS = 8;
  const STRIP_DRAG = 4;
  const ZOOM_STEP = 2;
  const ZOOM_LEAST = 8;
  const STRIP_COLOURS = {
    area: "#a9d8bd", band: "#2e8b57", over: "#c0392b", budget: "#1d2330",
    compaction: "#2f80c0", lost: "#8e44ad", cursor: "#1d2330", background: "#eceff3",
  };

  // What the strip draws, read off the tape's deltas (`t` tokens, `P` a fork's budget) and
  // event rows: the tokens and the budget after every event (index 0: the start) and the
  // events that compacted. Grown, never rebuilt, as a live tape grows.
  function MeterSeries(tape) {
    this.tape = tape;
    this.tokens = [0];
    this.budget = [tape.params.budget];
    this.compactions = [];
    this.grow();
  }

  MeterSeries.prototype.grow = function () {
    const tape = this.tape;
    for (let at = this.tokens.length; at <= tape.length; at++) {
      const frame = tape.frames[at - 1];
      this.tokens.push("t" in frame ? frame.t : this.tokens[at - 1]);
      this.budget.push("P" in frame ? frame.P.budget : this.budget[at - 1]);
      if (tape.rows[at - 1][1] === "CompactionTriggered") this.compactions.push(at);
    }
  };

  // The positions `first` to `last` downsampled to `width` columns: with N = last − first + 1,
  // column c covers the positions first + floor(c·N/width) to first + ceil((c+1)·N/width) − 1,
  // each read once; per column the least and most tokens and the budget at its last position.
  MeterSeries.prototype.columns = function (width, first, last) {
    const count = last - first + 1;
    const low = [], high = [], budget = [];
    for (let c = 0; c < width; c++) {
      const from = first + Math.min(count - 1, Math.floor((c * count) / width));
      const to = Math.max(from, first + Math.ceil(((c + 1) * count) / width) - 1);
      let least = Infinity, most = -Infinity;
      for (let at = from; at <= to; at++) {
        const tokens = this.tokens[at];
        if (tokens < least) least = tokens;
        if (tokens > most) most = tokens;
      }
      low.push(least); high.push(most); budget.push(this.budget[to]);
    }
    return { width: width, count: count, first: first, last: last, low: low, high: high, budget: budget };
  };

  // The strip is a control: a click jumps to the event under it (or to a compaction mark
  // within a few pixels), and with the keyboard focus the arrow keys move as everywhere on
  // the page, Page Up and Page Down to the previous and next compaction, Home and End to the
  // run's ends. The wheel (or +, − and 0) zooms around the pointer (the current event) and a
  // drag pans a zoomed strip. It asks the app to move with a bubbling "memtape-jump" event.
  // Whatever the run's length, it draws one column a pixel and at most one mark of a kind
  // a column: its drawing costs the width, not the events.
  function MeterStrip(tape) {
    this.series = new MeterSeries(tape);
    this.tape = tape;
    this.at = 0;
    this.drawn = null;
    this.span = null;
    this.dragged = null;
    this.root = element("div", "strip-box");
    this.node = element("canvas", "meter-strip");
    this.node.tabIndex = 0;
    this.node.setAttribute("role", "slider");
    this.node.setAttribute("aria-label", "window tokens over the whole run");
    this.node.setAttribute("aria-description",
      "click to jump there; Page Up and Page Down: previous and next compaction; Home, End: start, end; " +
      "plus and minus zoom, 0 shows the whole run; drag to pan");
    this.node.setAttribute("aria-valuemin", "0");
    this.node.title = "Click to jump there; wheel or + and − to zoom, drag to pan, 0 for the whole run";
    this.tools = element("div", "strip-tools");
    this.shown = element("span", "strip-range");
    this.tools.append(
      this.button("−", "zoom out (−)", () => this.zoom(1 / ZOOM_STEP, this.at)),
      this.button("+", "zoom in around the current event (+)", () => this.zoom(ZOOM_STEP, this.at)),
      this.button("whole run", "show the whole run (0)", () => this.whole()),
      this.shown,
    );
    this.legend = stripLegend(tape.probes.length > 0);
    this.root.append(this.tools, this.node, this.legend);
    this.root.hidden = tape.params.budget === null;
    this.node.addEventListener("click", (event) => {
      if (this.dragged !== null && this.dragged.moved) return;
      this.jump(this.positionAt(event.offsetX));
    });
    this.node.addEventListener("keydown", (event) => this.key(event));
    this.node.addEventListener("wheel", (event) => {
      event.preventDefault();
      this.zoom(event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, this.positionAt(event.offsetX));
    }, { passive: false });
    this.node.addEventListener("pointerdown", (event) => {
      this.dragged = { x: event.clientX, first: this.range()[0], moved: false };
    });
    this.node.addEventListener("pointermove", (event) => this.drag(event));
    if (typeof ResizeObserver !== "undefined") {
      new ResizeObserver(() => this.draw()).observe(this.node);
    }
  }

  MeterStrip.prototype.button = function (label, title, act) {
    const node = element("button", "strip-zoom", label);
    node.type = "button";
    node.title = title;
    node.setAttribute("aria-label", title);
    node.addEventListener("click", act);
    return node;
  };

  // What each mark of the strip means, in the colours it draws them.
  function stripLegend(probes) {
    const entries = [
      ["area", "window tokens (a band: least to most in a pixel's events)"],
      ["over", "over the budget"],
      ["budget", "the budget"],
      ["compaction", "a compaction"],
    ];
    if (probes) entries.push(["lost", "a probe lost (it left the window)"]);
    entries.push(["cursor", "the current event"]);
    const legend = element("ul", "strip-legend");
    legend.setAttribute("aria-label", "what the strip's marks mean");
    for (const [kind, text] of entries) {
      const entry = element("li", `key-${kind}`);
      entry.append(element("span", `swatch ${kind}`), element("span", "", text));
      legend.append(entry);
    }
    return legend;
  }

  MeterStrip.prototype.jump = function (at) {
    this.node.dispatchEvent(new CustomEvent("memtape-jump", { bubbles: true, detail: { tape: this.tape, at: at } }));
  };

  MeterStrip.prototype.key = function (event) {
    const marks = this.series.compactions;
    let to = null;
    if (event.key === "Home") to = 0;
    if (event.key === "End") to = this.tape.length;
    if (event.key === "PageDown") {
      const next = marks[upperBound(marks, this.at)];
      to = next === undefined ? null : next;
    }
    if (event.key === "PageUp") {
      const index = lowerBound(marks, this.at) - 1;
      to = index < 0 ? null : marks[index];
    }
    if (event.key === "Home" || event.key === "End" || event.key.startsWith("Page")) {
      event.preventDefault();
      event.stopPropagation();
    }
    if (to !== null) this.jump(to);
    if (zoomKey(this, event.key)) { event.preventDefault(); event.stopPropagation(); }
  };

  // + (or =) zooms in around the current event, − out, 0 shows the whole run.
  function zoomKey(strip, key) {
    if (key === "+" || key === "=") strip.zoom(ZOOM_STEP, strip.at);
    else if (key === "-" || key === "−") strip.zoom(1 / ZOOM_STEP, strip.at);
    else if (key === "0") strip.whole();
    else return false;
    return true;
  }

  // The first index whose value is more than `value` (upperBound) or at least it (lowerBound).
  function upperBound(sorted, value) {
    let low = 0, high = sorted.length;
    while (low < high) { const middle = (low + high) >> 1; if (sorted[middle] <= value) low = middle + 1; else high = middle; }
    return low;
  }

  function lowerBound(sorted, value) {
    let low = 0, high = sorted.length;
    while (low < high) { const middle = (low + high) >> 1; if (sorted[middle] < value) low = middle + 1; else high = middle; }
    return low;
  }

  // The positions shown, [first, last]: the whole run unless zoomed.
  MeterStrip.prototype.range = function () {
    const count = this.series.tokens.length;
    if (this.span === null) return [0, count - 1];
    const size = Math.min(this.span[1], count);
    const first = Math.max(0, Math.min(this.span[0], count - size));
    return [first, first + size - 1];
  };

  // Zoomed by `factor` (2: twice as close) around position `anchor`, which keeps its place.
  MeterStrip.prototype.zoom = function (factor, anchor) {
    const count = this.series.tokens.length;
    const [first, last] = this.range();
    const size = last - first + 1;
    const least = Math.min(count, ZOOM_LEAST);
    const resized = Math.max(least, Math.min(count, Math.round(size / factor)));
    if (resized >= count) { this.whole(); return; }
    const share = size > 1 ? (anchor - first) / (size - 1) : 0.5;
    const start = Math.round(anchor - share * (resized - 1));
    this.span = [Math.max(0, Math.min(start, count - resized)), resized];
    this.draw();
  };

  MeterStrip.prototype.whole = function () {
    this.span = null;
    this.draw();
  };

  // A drag pans a zoomed strip: the event under the pointer stays under it.
  MeterStrip.prototype.drag = function (event) {
    const dragged = this.dragged;
    if (dragged === null || event.buttons !== 1 || this.span === null) return;
    const moved = event.clientX - dragged.x;
    if (Math.abs(moved) < STRIP_DRAG && !dragged.moved) return;
    dragged.moved = true;
    const width = Math.max(1, this.node.clientWidth);
    this.span = [Math.round(dragged.first - (moved * this.span[1]) / width), this.span[1]];
    this.span[0] = this.range()[0];
    this.draw();
  };

  // The x (CSS pixels) at the middle of position `at`'s share of the strip.
  MeterStrip.prototype.xOf = function (at, width) {
    const [first, last] = this.range();
    return ((at - first + 0.5) * width) / (last - first + 1);
  };

  // The position under x: the nearest compaction mark within STRIP_SNAP pixels, else the
  // position whose share of the strip holds x.
  MeterStrip.prototype.positionAt = function (x) {
    const width = this.node.clientWidth;
    const [first, last] = this.range();
    const count = last - first + 1;
    if (width <= 0) return first;
    const marks = this.series.compactions;
    const guess = first + Math.floor((x * count) / width);
    const leftmost = first + Math.floor(((x - STRIP_SNAP) * count) / width) - 1;
    let best = null;
    for (let index = lowerBound(marks, leftmost); index < marks.length; index++) {
      const offset = this.xOf(marks[index], width) - x;
      if (offset > STRIP_SNAP) break;
      if (Math.abs(offset) <= STRIP_SNAP && (best === null || Math.abs(offset) < best[1])) {
        best = [marks[index], Math.abs(offset)];
      }
    }
    if (best !== null) return best[0];
    return Math.max(first, Math.min(last, guess));
  };

  MeterStrip.prototype.show = function (at) {
    this.at = at;
    if (this.series.tokens.length !== this.tape.length + 1) { this.series.grow(); this.drawn = null; }
    const tokens = this.series.tokens[at];
    const budget = this.series.budget[at];
    this.node.setAttribute("aria-valuemax", String(this.tape.length));
    this.node.setAttribute("aria-valuenow", String(at));
    const standing = budget !== null && tokens > budget ? "over budget" : "within budget";
    this.node.setAttribute("aria-valuetext",
      budget === null ? `event ${at}: ${counted(tokens, "token")}` : `event ${at}: ${tokens}/${budget} tokens, ${standing}`);
    // A zoomed strip follows the current event out of its range.
    const [first, last] = this.range();
    if (this.span !== null && (at < first || at > last)) {
      this.span = [at - Math.floor(this.span[1] / 2), this.span[1]];
      this.span[0] = this.range()[0];
    }
    this.draw();
  };

  // The range's picture is drawn once per width, range and length, off screen; a move copies
  // it and draws the cursor, so a seek costs the same on a run of ten events or of a million.
  MeterStrip.prototype.draw = function () {
    const width = Math.floor(this.node.clientWidth);
    if (this.root.hidden || width <= 0) return;
    const ratio = window.devicePixelRatio || 1;
    const [first, last] = this.range();
    const drawn = this.drawn;
    if (drawn === null || drawn.width !== width || drawn.first !== first || drawn.last !== last ||
      drawn.length !== this.series.tokens.length || drawn.losses !== this.tape.losses.length ||
      drawn.ratio !== ratio) {
      const columns = this.series.columns(width, first, last);
      columns.length = this.series.tokens.length;
      columns.losses = this.tape.losses.length;
      columns.top = Math.max(1, topOf(columns)) * 1.05;
      columns.marked = this.markedColumns(this.series.compactions, width);
      columns.lost = this.markedColumns(this.tape.losses, width);
      columns.floor = this.tape.probes.length ? STRIP_LOSS : 0;
      columns.ratio = ratio;
      columns.image = picture(columns, ratio);
      this.drawn = columns;
      const whole = first === 0 && last === this.series.tokens.length - 1;
      this.shown.textContent = whole ? `the whole run: events 0–${last}` : `events ${first}–${last} of ${this.tape.length}`;
    }
    if (this.node.width !== width * ratio) this.node.width = width * ratio;
    if (this.node.height !== STRIP_HEIGHT * ratio) this.node.height = STRIP_HEIGHT * ratio;
    const pen = this.node.getContext("2d");
    pen.setTransform(1, 0, 0, 1, 0, 0);
    pen.drawImage(this.drawn.image, 0, 0);
    pen.setTransform(ratio, 0, 0, ratio, 0, 0);
    pen.fillStyle = STRIP_COLOURS.cursor;
    if (this.at >= first && this.at <= last) pen.fillRect(Math.floor(this.xOf(this.at, width)) - 1, 0, 2, STRIP_HEIGHT);
  };

  // The columns drawn on a canvas of their own: per column the area under its least tokens,
  // a band up to its most, red where that is over the budget; the budget line as one
  // polyline (a fork may move it); a tick over each column that holds a compaction, and
  // (for a run with probes) a triangle under each that holds a probe's loss.
  function picture(columns, ratio) {
    const width = columns.width;
    const image = document.createElement("canvas");
    image.width = width * ratio;
    image.height = STRIP_HEIGHT * ratio;
    const pen = image.getContext("2d");
    pen.setTransform(ratio, 0, 0, ratio, 0, 0);
    pen.fillStyle = STRIP_COLOURS.background;
    pen.fillRect(0, 0, width, STRIP_HEIGHT);
    // The marks have lanes of their own above and below the tokens, so that they never hide a peak.
    const base = STRIP_HEIGHT - columns.floor;
    const y = (value) => base - (value / columns.top) * (base - STRIP_MARK);
    for (let c = 0; c < width; c++) {
      const low = y(columns.low[c]), high = y(columns.high[c]);
      pen.fillStyle = STRIP_COLOURS.area;
      pen.fillRect(c, low, 1, base - low);
      pen.fillStyle = STRIP_COLOURS.band;
      pen.fillRect(c, high, 1, Math.max(1, low - high));
      const budget = columns.budget[c];
      if (budget !== null && columns.high[c] > budget) {
        pen.fillStyle = STRIP_COLOURS.over;
        pen.fillRect(c, high, 1, Math.max(1, y(budget) - high));
      }
    }
    pen.strokeStyle = STRIP_COLOURS.budget;
    pen.lineWidth = 1;
    pen.beginPath();
    let drawing = false;
    for (let c = 0; c < width; c++) {
      const budget = columns.budget[c];
      if (budget === null) { drawing = false; continue; }
      const line = Math.round(y(budget)) + 0.5;
      if (drawing) pen.lineTo(c + 1, line); else { pen.moveTo(c, line); pen.lineTo(c + 1, line); drawing = true; }
    }
    pen.stroke();
    pen.fillStyle = STRIP_COLOURS.compaction;
    pen.beginPath();
    for (const x of columns.marked) {
      pen.rect(x, 0, 1, STRIP_MARK - 1);
      pen.moveTo(x - 3, 0); pen.lineTo(x + 4, 0); pen.lineTo(x + 0.5, 5); pen.closePath();
    }
    pen.fill();
    if (columns.floor > 0) {
      pen.fillStyle = STRIP_COLOURS.lost;
      pen.beginPath();
      for (const x of columns.lost) {
        pen.moveTo(x - 3, STRIP_HEIGHT); pen.lineTo(x + 4, STRIP_HEIGHT); pen.lineTo(x + 0.5, base + 1); pen.closePath();
      }
      pen.fill();
    }
    return image;
  }

  // The columns that hold one of `positions` (sorted) in the range shown: one mark each,
  // however many it holds; only the range's positions are visited.
  MeterStrip.prototype.markedColumns = function (positions, width) {
    const [first, last] = this.range();
    const marked = [];
    for (let index = lowerBound(positions, first); index < positions.length && positions[index] <= last; index++) {
      const x = Math.floor(this.xOf(positions[index], width));
      if (marked[marked.length - 1] !== x) marked.push(x);
    }
    return marked;
  };

  // The most tokens or budget in any column: the strip's scale reaches a twentieth above it.
  function topOf(columns) {
    let top = 0;
    for (let c = 0; c < columns.width; c++) {
      if (columns.high[c] > top) top = columns.high[c];
      if (columns.budget[c] !== null && columns.budget[c] > top) top = columns.budget[c];
    }
    return top;
  }

  // What the strip drew, for tests: the series, the range, the columns and where each mark is.
  MeterStrip.prototype.drawing = function () {
    const drawn = this.drawn;
    const width = drawn === null ? 0 : drawn.width;
    const columns = drawn === null ? null : {
      width: width, count: drawn.count, low: drawn.low, high: drawn.high, budget: drawn.budget,
      top: drawn.top, marked: drawn.marked, lost: drawn.lost, floor: drawn.floor,
    };
    const [first, last] = this.range();
    const inRange = (at) => at >= first && at <= last;
    return {
      tokens: this.series.tokens, budget: this.series.budget, compactions: this.series.compactions,
      losses: this.tape.losses, range: [first, last],
      columns: columns, height: STRIP_HEIGHT, lane: STRIP_MARK,
      marks: this.series.compactions.filter(inRange).map((at) => [at, this.xOf(at, width)]),
      lossMarks: this.tape.losses.filter(inRange).map((at) => [at, this.xOf(at, width)]),
    };
  };

  // ---- the diff between the pinned point and the current one ----

  function diffLines(tape, from, to) {
    const before = tape.stateAt(from);
    const after = tape.stateAt(to);
    const lines = [];
    if (before.clock !== after.clock) lines.push(`clock t=${number(before.clock, 2)} → t=${number(after.clock, 2)}`);
    if (before.tokens !== after.tokens) lines.push(`window ${before.tokens} → ${after.tokens} tokens`);
    const turns = Math.max(before.turns, after.turns);
    for (let turn = 1; turn <= turns; turn++) {
      const was = tape.tierOf(turn, before);
      const now = tape.tierOf(turn, after);
      if (was !== now) lines.push(`turn ${turn}: ${was || "not arrived"} → ${now || "not arrived"}`);
    }
    for (let id = 1; id <= tape.facts.length; id++) {
      const line = factChange(tape, id, from, to);
      if (line) lines.push(line);
    }
    return lines;
  }

  function factChange(tape, id, from, to) {
    const was = tape.factStatus(id, from);
    const now = tape.factStatus(id, to);
    const key = tape.facts[id - 1][0];
    if (was === now) {
      const reads = [tape.readsAt(id, from), tape.readsAt(id, to)];
      return reads[0] !== reads[1] ? `fact ${id} '${key}': reads ${reads[0]} → ${reads[1]}` : null;
    }
    const end = tape.endings.get(id);
    let why = "";
    if (now === "retired" || was === "retired") why = ` (superseded by fact ${end.by})`;
    if (now === "evicted" || was === "evicted") why = ` (score ${end.score.toFixed(4)})`;
    if (now === "expired" || was === "expired") why = ` (${end.reason})`;
    return `fact ${id} '${key}': ${was || "not written"} → ${now || "not written"}${why}`;
  }

  // ---- the app: one or two panels stepping together ----

  function App(data) {
    this.panelsRoot = document.getElementById("panels");
    this.slider = document.getElementById("slider");
    this.positionText = document.getElementById("position");
    this.eventList = document.getElementById("event-list");
    this.diffBody = document.getElementById("diff-body");
    this.probesSection = document.getElementById("probes");
    this.probeBody = document.getElementById("probe-body");
    this.gotoInput = document.getElementById("goto-input");
    this.gotoError = document.getElementById("goto-error");
    this.pinned = null;
    this.position = 0;
    this.load(data);
  }

  App.prototype.load = function (data) {
    this.data = data;
    this.tapes = data.runs.map((run) => new Tape(run));
    this.compare = this.tapes.length > 1;
    document.body.classList.toggle("compare", this.compare);
    this.panels = [];
    this.panelsRoot.replaceChildren();
    for (const tape of this.tapes) this.panels.push(new Panel(this.panelsRoot, tape));
    document.getElementById("title").textContent = visible(this.tapes.map((t) => t.name).join(" vs "));
    this.slider.max = String(this.last());
  };

  // Appends what the server added to each run's tape; false, with nothing changed, unless
  // every run's follows on.
  App.prototype.extend = function (data) {
    if (data.runs.length !== this.tapes.length) return false;
    if (!data.runs.every((run, index) => this.tapes[index].follows(run))) return false;
    data.runs.forEach((run, index) => this.tapes[index].extend(run));
    this.data.next = data.next;
    this.slider.max = String(this.last());
    return true;
  };

  // In one run, a position is an event; compared runs step together, command by command.
  App.prototype.last = function () {
    if (!this.compare) return this.tapes[0].length;
    return Math.max(...this.tapes.map((t) => t.ends.length));
  };

  App.prototype.eventOf = function (tape, position) {
    if (!this.compare) return position;
    const step = Math.min(position, tape.ends.length);
    return step === 0 ? 0 : tape.ends[step - 1];
  };

  App.prototype.seek = function (position) {
    this.position = Math.max(0, Math.min(this.last(), position));
    this.slider.value = String(this.position);
    const unit = this.compare ? "step" : "event";
    this.positionText.textContent = `${unit} ${this.position} / ${this.last()}`;
    this.panels.forEach((panel, index) => panel.render(this.eventOf(this.tapes[index], this.position)));
    this.renderEvents();
    this.renderDiff();
    this.renderProbes();
  };

  App.prototype.renderEvents = function () {
    if (this.compare) { this.renderSteps(); return; }
    const tape = this.tapes[0];
    const current = this.eventOf(tape, this.position);
    const first = Math.max(0, current - EVENT_ROWS_AROUND);
    const last = Math.min(tape.length, current + EVENT_ROWS_AROUND);
    const items = [];
    for (let at = first; at <= last; at++) items.push(eventItem(tape, 0, at, current));
    fill(this.eventList, items);
    this.scrollToCurrent();
  };

  // Compared runs: one row per command around the current one, each run's events for it in
  // its own column (under its panel), so the runs' answers to the same input sit side by side.
  App.prototype.renderSteps = function () {
    const first = Math.max(0, this.position - EVENT_ROWS_AROUND);
    const last = Math.min(this.last(), this.position + EVENT_ROWS_AROUND);
    const heads = element("li", "step heads");
    heads.append(element("span", "at", "step"));
    for (const tape of this.tapes) heads.append(element("span", "run-head", tape.name));
    const items = [heads];
    for (let step = first; step <= last; step++) {
      const row = element("li", step === this.position ? "step current" : "step");
      row.dataset.step = String(step);
      row.append(element("span", "at", step));
      this.tapes.forEach((tape, index) => {
        const column = element("ol", "run-events");
        column.dataset.run = String(index);
        const current = this.eventOf(tape, this.position);
        for (const at of eventsOfStep(tape, step)) column.append(eventItem(tape, index, at, current));
        if (step > tape.ends.length) column.append(element("li", "ended", "(run ended)"));
        row.append(column);
      });
      items.push(row);
    }
    fill(this.eventList, items);
    this.scrollToCurrent();
  };

  // The events of command `step` (0: the start, before any event); none past the run's end.
  function eventsOfStep(tape, step) {
    if (step === 0) return [0];
    if (step > tape.ends.length) return [];
    const events = [];
    for (let at = step === 1 ? 1 : tape.ends[step - 2] + 1; at <= tape.ends[step - 1]; at++) events.push(at);
    return events;
  }

  // The event list's entry for event `at` of run `run` (0: the start).
  function eventItem(tape, run, at, current) {
    const row = at === 0 ? null : tape.rows[at - 1];
    const item = element("li", at === current ? "event current" : "event");
    item.dataset.at = String(at);
    item.dataset.run = String(run);
    const what = row !== null && row[1] === "Queried"
      ? queryRow(tape, row[3])
      : element("span", "what", row === null ? "start: nothing has happened" : `${row[1]}: ${row[2]}`);
    item.append(element("span", "at", at), what);
    return item;
  }

  // Keep the current event in the middle of the list's view.
  App.prototype.scrollToCurrent = function () {
    const current = this.eventList.querySelector("li.current");
    if (current) this.eventList.scrollTop = current.offsetTop - this.eventList.clientHeight / 2;
  };

  // A query: what it asked and expected, then its results best first with their scores,
  // the expected key marked where it came back (or said missing).
  function queryRow(tape, query) {
    const [text, key, k, found] = query;
    const node = element("span", "what query");
    const asked = [text ? `Queried '${text}'` : "Queried", key ? `expecting '${key}'` : null, `top ${k}`];
    node.append(element("span", "asked", asked.filter((part) => part !== null).join(" · ")));
    const results = element("ol", "results");
    for (const [id, score] of found) {
      const factKey = tape.facts[id - 1][0];
      const hit = key !== "" && factKey === key;
      const result = element("li", hit ? "result hit" : "result", `fact ${id} '${factKey}' ${score.toFixed(4)}${hit ? " ✓ expected" : ""}`);
      results.append(result);
    }
    if (found.length === 0) results.append(element("li", "result", "nothing active"));
    node.append(results);
    if (key !== "" && !found.some(([id]) => tape.facts[id - 1][0] === key)) {
      node.append(element("span", "miss", `'${key}' not returned`));
    }
    return node;
  }

  // A click on an event: in one run, that event; compared, that event's command in every run.
  App.prototype.jumpToEvent = function (run, at) {
    if (!this.compare) { this.seek(at); return; }
    this.seek(at === 0 ? 0 : this.tapes[run].rows[at - 1][0]);
  };

  App.prototype.renderDiff = function () {
    if (this.pinned === null) { fill(this.diffBody, []); return; }
    const sections = this.tapes.map((tape) => {
      const from = this.eventOf(tape, this.pinned);
      const to = this.eventOf(tape, this.position);
      const lines = diffLines(tape, from, to);
      const section = element("div", "diff-run");
      section.append(element("h3", "", `${tape.name}: event ${from} → ${to}`));
      section.append(listOf(lines.length ? lines : ["no change"], (line) => line));
      return section;
    });
    fill(this.diffBody, sections);
  };

  App.prototype.pin = function () {
    this.pinned = this.position;
    this.renderDiff();
  };

  // ---- the probes: what each run's scenario planted, kept or lost at the current event ----

  const PROBE_ORDER = { lost: 0, kept: 1, "not due": 2 };

  App.prototype.renderProbes = function () {
    const shown = this.tapes.some((tape) => tape.probes.length > 0);
    this.probesSection.hidden = !shown;
    if (!shown) return;
    fill(this.probeBody, this.tapes.map((tape, index) => probeList(tape, index, this.eventOf(tape, this.position), this.compare)));
  };

  // One run's probes after event `at`: counted by standing, then listed lost first (each loss
  // a link to the event that lost it), kept, and not yet due; the first few shown.
  function probeList(tape, run, at, named) {
    const part = element("div", "probe-run");
    if (named) part.append(element("h3", "", tape.name));
    if (tape.probes.length === 0) { part.append(element("p", "hint", "no probes")); return part; }
    const standings = tape.probes.map((probe, index) => Object.assign({ index: index }, tape.probeAt(index, at)));
    const count = (standing) => standings.filter((s) => s.standing === standing).length;
    part.append(element("p", "probe-counts",
      `after event ${at}: ${count("kept")} kept · ${count("lost")} lost · ${count("not due")} not yet due`));
    standings.sort((a, b) => (PROBE_ORDER[a.standing] - PROBE_ORDER[b.standing]) || (a.index - b.index));
    const list = element("ul", "probe-list");
    for (const standing of standings.slice(0, LIST_LIMIT)) list.append(probeItem(tape, run, standing));
    if (standings.length > LIST_LIMIT) list.append(element("li", "more", `… ${standings.length - LIST_LIMIT} more`));
    part.append(list);
    return part;
  }

  function probeItem(tape, run, standing) {
    const [text, from] = tape.probes[standing.index];
    const item = element("li", `probe ${standing.standing.replace(" ", "-")}`);
    item.append(element("span", "probe-text", text));
    const change = standing.change;
    let said;
    if (standing.standing === "not due") {
      said = `due from turn ${from}`;
    } else if (standing.standing === "kept") {
      said = `kept · showing since event ${change[1]} (turn ${change[3]})`;
    } else {
      const by = change[4] === null ? "never shown since it came due" : `by ${change[4]}`;
      said = `lost at event ${change[1]} (turn ${change[3]}, ${by})`;
    }
    const standingText = element(change === null ? "span" : "button", "probe-standing", said);
    if (change !== null) {
      standingText.type = "button";
      standingText.dataset.at = String(change[1]);
      standingText.dataset.run = String(run);
      standingText.title = "go to that event";
    }
    item.append(standingText);
    return item;
  }

  // ---- going to a turn, a step, an event or a kind of event ----

  // What the go-to box's text names, as an event of run 0: `N`, `event N` or `eN` an event;
  // `turn N` or `tN` the event that added turn N; `step N` or `sN` the last event of
  // command N; `lost` the next probe loss; any other text the next event whose row (its type
  // and summary) holds it, searched from the current event on, then from the start.
  // Returns {at} or {error}.
  App.prototype.target = function (text) {
    const tape = this.tapes[0];
    const asked = text.trim();
    const current = this.eventOf(tape, this.position);
    const numbered = /^(event|e|turn|t|step|s)?\s*#?(\d+)$/i.exec(asked);
    if (numbered !== null) {
      const kind = (numbered[1] || "event").toLowerCase()[0];
      const number = Number(numbered[2]);
      if (kind === "e") {
        return number <= tape.length ? { at: number } : { error: `no event ${number}: the run has ${tape.length}` };
      }
      if (kind === "t") {
        const turns = tape.turnAt.length;
        return number >= 1 && number <= turns ? { at: tape.turnAt[number - 1] } : { error: `no turn ${number}: the run has ${turns}` };
      }
      const steps = tape.ends.length;
      if (number === 0) return { at: 0 };
      return number <= steps ? { at: tape.ends[number - 1] } : { error: `no step ${number}: the run has ${steps}` };
    }
    if (asked === "") return { error: "type an event, a turn (t12), a step (s5), lost, or text to find" };
    if (asked.toLowerCase() === "lost") {
      const losses = tape.losses;
      if (losses.length === 0) return { error: "no probe was lost in this run" };
      const next = losses[upperBound(losses, current)];
      return { at: next === undefined ? losses[0] : next };
    }
    const needle = asked.toLowerCase();
    for (let step = 1; step <= tape.length; step++) {
      const at = ((current + step - 1) % tape.length) + 1;
      const row = tape.rows[at - 1];
      if (`${row[1]}: ${row[2]}`.toLowerCase().includes(needle)) return { at: at };
    }
    return { error: `no event holds '${asked}'` };
  };

  App.prototype.goTo = function (text) {
    const found = this.target(text);
    this.gotoError.textContent = found.error || "";
    if (found.error === undefined) this.jumpToEvent(0, found.at);
  };

  // Keyboard steps: one command (Shift with an arrow), the previous or next compaction (Page
  // Up, Page Down) or probe loss ([ and ]), the ends (Home, End), zoom (+, −, 0).
  App.prototype.keyStep = function (event) {
    const tape = this.tapes[0];
    const current = this.eventOf(tape, this.position);
    const key = event.key;
    let to = null;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const forward = key === "ArrowRight";
      if (!event.shiftKey || this.compare) { this.seek(this.position + (forward ? 1 : -1)); return true; }
      const ends = tape.ends;
      to = forward ? ends[upperBound(ends, current)] : (lowerBound(ends, current) > 0 ? ends[lowerBound(ends, current) - 1] : 0);
    } else if (key === "Home") {
      this.seek(0);
      return true;
    } else if (key === "End") {
      this.seek(this.last());
      return true;
    } else if (key === "PageDown" || key === "]") {
      const marks = key === "PageDown" ? this.panels[0].strip.series.compactions : tape.losses;
      to = marks[upperBound(marks, current)];
    } else if (key === "PageUp" || key === "[") {
      const marks = key === "PageUp" ? this.panels[0].strip.series.compactions : tape.losses;
      to = marks[lowerBound(marks, current) - 1];
    } else if (key === "/") {
      this.gotoInput.focus();
      return true;
    } else {
      return this.panels.map((panel) => zoomKey(panel.strip, key)).some(Boolean);
    }
    if (to !== undefined && to !== null) this.jumpToEvent(0, to);
    return true;
  };

  // ---- controls ----

  function isTyping(target) {
    return ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) && target.type !== "range";
  }

  App.prototype.bind = function () {
    document.getElementById("back").addEventListener("click", () => this.seek(this.position - 1));
    document.getElementById("forward").addEventListener("click", () => this.seek(this.position + 1));
    document.getElementById("pin").addEventListener("click", () => this.pin());
    this.slider.addEventListener("input", () => this.seek(Number(this.slider.value)));
    this.panelsRoot.addEventListener("memtape-jump", (event) => {
      this.jumpToEvent(this.tapes.indexOf(event.detail.tape), event.detail.at);
    });
    this.eventList.addEventListener("click", (event) => {
      const item = event.target.closest("li.event");
      if (item) this.jumpToEvent(Number(item.dataset.run), Number(item.dataset.at));
    });
    this.probeBody.addEventListener("click", (event) => {
      const link = event.target.closest("button.probe-standing");
      if (link) this.jumpToEvent(Number(link.dataset.run), Number(link.dataset.at));
    });
    document.getElementById("goto").addEventListener("submit", (event) => {
      event.preventDefault();
      this.goTo(this.gotoInput.value);
    });
    document.addEventListener("keydown", (event) => {
      if (isTyping(event.target) || event.target === this.slider) return;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (this.keyStep(event)) event.preventDefault();
    });
  };

  // ---- live mode (memtape serve): commands go to the server, the run comes back ----

  // A form's fields as the command the server decodes (memtape.core.codec.command_from_data).
  const COMMANDS = {
    turn: (f) => ({ role: f.role, text: f.text, salient: f.salient === "" ? null : f.salient === "true" }),
    write: (f) => ({ key: f.key, text: f.text, importance: Number(f.importance), supersedes: f.supersedes || null }),
    read: (f) => (/^#\d+$/.test(f.key) ? { key: null, id: Number(f.key.slice(1)) } : { key: f.key, id: null }),
    advance: (f) => ({ to: Number(f.to) }),
    query: (f) => ({ text: f.text, key: f.key, k: Number(f.k) }),
    episode: (f) => ({ text: f.text }),
    consolidate: () => ({}),
  };

  function commandOf(form) {
    const fields = Object.fromEntries(new FormData(form).entries());
    const kind = form.dataset.kind;
    return Object.assign({ kind: kind }, COMMANDS[kind](fields));
  }

  // A command, answered with what it added after the events the page holds; appended to the
  // tape (or, should it not follow on, the whole run fetched again).
  App.prototype.send = async function (path, body) {
    const error = document.getElementById("live-error");
    const since = `?since=${this.tapes[0].length}`;
    const headers = Object.assign({ "Content-Type": "application/json" }, this.headers);
    const response = await fetch(path + since, { method: "POST", headers: headers, body: JSON.stringify(body) });
    const answer = await response.json();
    if (response.ok) {
      error.textContent = "";
      if (!this.extend(answer)) this.load(await (await fetch("/api/data", { headers: this.headers })).json());
      this.showNext();
      this.seek(this.last());
    } else {
      error.textContent = visible(answer.error);
    }
    // Counts the answers drawn, so that a script (or a test) can wait for one.
    document.body.dataset.answers = String(Number(document.body.dataset.answers || 0) + 1);
  };

  App.prototype.showNext = function () {
    const next = document.getElementById("next");
    const upcoming = this.data.next;
    next.disabled = upcoming === null;
    next.textContent = upcoming === null ? "no more recorded steps" : visible(upcoming.label);
  };

  // `headers`: what every request to the server carries (the session's token), as the
  // server wrote them into this page.
  App.prototype.bindLive = function (headers) {
    this.headers = headers;
    document.getElementById("live").hidden = false;
    this.showNext();
    document.getElementById("next").addEventListener("click", () => this.send("/api/next", {}));
    // Only the forms of the axes the scenario has: a command of another axis is refused.
    const params = this.tapes[0].params;
    const axes = { compaction: params.compaction !== null, forgetting: params.forgetting !== null, memory: params.memory };
    for (const form of document.querySelectorAll("#live form")) {
      if (form.dataset.axis) form.hidden = !axes[form.dataset.axis];
      form.addEventListener("submit", (event) => { event.preventDefault(); this.send("/api/command", commandOf(form)); });
    }
  };

  const initial = JSON.parse(document.getElementById("memtape-data").textContent);
  const app = new App(initial);
  app.bind();
  if (initial.live) app.bindLive(initial.headers);
  app.seek(app.last());
  // For tests and scripts: the projected state of run `index` at event `at`, and seeking.
  window.memtapeViewer = {
    view: (index, at) => app.tapes[index].view(at),
    payload: (index) => app.tapes[index].payload(),
    length: (index) => app.tapes[index].length,
    seek: (position) => app.seek(position),
    position: () => app.position,
    strip: (index) => app.panels[index].strip.drawing(),
    visible: (text) => visible(text),
    // The deltas the last seek of run `index` applied (at most one keyframe interval).
    folded: (index) => app.tapes[index].folded,
  };
})();
