/* fencesim report: draws the timeline from the JSON in #timeline-data.
   No network access, no external code. Layout is in CSS pixels; time is in
   simulated nanoseconds. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("timeline-data").textContent);
  var chart = document.getElementById("chart");
  var detailsText = document.getElementById("details-text");
  var detailsRaw = document.getElementById("details-raw");
  var rawToggle = document.getElementById("raw-toggle");
  var notice = document.getElementById("notice");
  var rangeEl = document.getElementById("range");
  var overview = document.getElementById("overview");
  var viewport = document.getElementById("viewport");
  var keyInput = document.getElementById("keyf");
  var SVGNS = "http://www.w3.org/2000/svg";

  // Geometry. The plot runs from x0 to x1; PAD keeps a mark at either end
  // of the view whole instead of cut in half by the frame.
  var LABEL = 130, RIGHT = 14, PAD = 12, AXIS = 24, LANE = 36, FOLDED = 15, ROW = 13;
  var STRIP = (D.bursts.length || D.bands.length) ? 2 * ROW + 2 : 0;
  var STORY = D.story ? 70 : 0;
  var STORYTOP = AXIS + STRIP + 2;
  var TOP = STORYTOP + STORY + (STORY ? 6 : 2);
  var INDIVIDUAL = 2500; // above this many items in view, draw them as one path
  var PALETTE = ["#bf3989", "#9a6700", "#116329", "#0550ae", "#bc4c00", "#6639ba", "#1b7c83", "#6e7781"];

  var hiSeq = {};
  D.hi.forEach(function (h) { hiSeq[h[0]] = true; });
  var mattered = {};
  D.mattered.forEach(function (s) { mattered[s] = true; });
  var show = { msg: true, kernel: false, note: true };
  var kindShow = {};
  D.kinds.forEach(function (k) { kindShow[k] = true; });
  var v0 = D.focus[0], v1 = D.focus[1];
  if (location.hash === "#whole") { v0 = D.t0; v1 = D.t1; } // the whole run first
  var flash = null; // the event a link jumped to: [t, lane]

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  // Times in seconds and milliseconds, "75.123 s"; finer when zoomed in.
  function fmt(ns) {
    var neg = ns < 0;
    if (neg) ns = -ns;
    var s = Math.floor(ns / 1e9), ms = Math.floor((ns % 1e9) / 1e6);
    var out = s + "." + ("00" + ms).slice(-3) + " s";
    if (v1 - v0 < 50e6) out = (ns / 1e9).toFixed(6) + " s";
    return (neg ? "-" : "") + out;
  }
  function fmtDur(ns) {
    if (ns < 1e9) return (ns / 1e6).toFixed(3).replace(/\.?0+$/, "") + " ms";
    return (ns / 1e9).toFixed(3).replace(/\.?0+$/, "") + " s";
  }

  // Text widths, measured once per string and font.
  var ctx2d = document.createElement("canvas").getContext("2d");
  var widthCache = {};
  function tw(s, font) {
    var key = font + "\u0000" + s;
    if (widthCache[key] === undefined) {
      ctx2d.font = font;
      widthCache[key] = ctx2d.measureText(s).width;
    }
    return widthCache[key];
  }
  var FONT = "11px system-ui, 'DejaVu Sans', sans-serif";
  var BOLD = "bold 11px system-ui, 'DejaVu Sans', sans-serif";
  var SMALL = "10.5px system-ui, 'DejaVu Sans', sans-serif";
  // fit cuts s to at most w pixels, with an ellipsis.
  function fit(s, w, font) {
    if (tw(s, font) <= w) return s;
    var lo = 0, hi = s.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (tw(s.slice(0, mid) + "…", font) <= w) lo = mid; else hi = mid - 1;
    }
    return lo > 0 ? s.slice(0, lo) + "…" : "";
  }
  // Rows of placed labels: place returns the first row where [a, b] is free.
  function rows(n) {
    var r = [];
    for (var i = 0; i < n; i++) r.push([]);
    return {
      place: function (a, b, from) {
        for (var i = from || 0; i < r.length; i++) {
          var ok = r[i].every(function (iv) { return b + 3 < iv[0] || a > iv[1] + 3; });
          if (ok) { r[i].push([a, b]); return i; }
        }
        return -1;
      }
    };
  }

  // Lanes: folded ones are thin.
  var fold = [];
  var laneTop = [], laneH = [];
  function layout() {
    var y = TOP;
    for (var l = 0; l < D.lanes.length; l++) {
      laneTop[l] = y;
      laneH[l] = fold[l] ? FOLDED : LANE;
      y += laneH[l];
    }
    return y;
  }
  function laneY(l) { return laneTop[l] + laneH[l] / 2; }
  function width() { return Math.max(600, chart.clientWidth || 1200); }

  // Note kinds get fixed colours when well known, else the next free one.
  var KNOWN = { db: "#953800", call: "#0969da", "return": "#1a7f37", commit: "#8250df", verdict: "#cf222e", recv: "#bf3989" };
  var colors = {}, nextColor = 0;
  var noteKinds = {};
  D.marks.forEach(function (m) { if (m[4] === 4) noteKinds[m[3]] = true; });
  Object.keys(noteKinds).map(Number).sort(function (a, b) { return D.kinds[a] < D.kinds[b] ? -1 : 1; }).forEach(function (k) {
    var name = D.kinds[k];
    if (Object.prototype.hasOwnProperty.call(KNOWN, name)) { colors[k] = KNOWN[name]; return; }
    colors[k] = PALETTE[nextColor++ % PALETTE.length];
  });
  function kindColor(k) { return colors[k] || "#6e7781"; }

  // The lanes the story and the failure touch: never folded at the start.
  var keep = {};
  if (D.story) D.story.steps.forEach(function (s) { keep[s[2]] = true; });
  D.needed.forEach(function (n) { n[3].forEach(function (l) { keep[l] = true; }); });
  D.hi.forEach(function (h) { keep[h[2]] = true; });
  D.msgs.forEach(function (m) { if (mattered[m[6]]) { keep[m[0]] = true; keep[m[1]] = true; } });

  // The key filter: which marks and messages mention the key.
  var query = "", markOK = null, msgOK = null, always = {};
  if (D.story) D.story.steps.forEach(function (s) { always[s[0]] = true; });
  D.needed.forEach(function (n) { always[n[0]] = true; });
  D.hi.forEach(function (h) { always[h[0]] = true; });
  D.mattered.forEach(function (s) { always[s] = true; });
  function matcher(q) {
    q = q.trim();
    if (!q) return null;
    var src = q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+");
    // Whole words and numbers: "104" does not match 1040 or 117.104 s.
    if (/^[\w]/.test(q)) src = "(?<![\\w.])" + src;
    if (/[\w]$/.test(q)) src = src + "(?![\\w])";
    try { return new RegExp(src, "i"); } catch (e) { return null; }
  }
  function setQuery(q) {
    query = q;
    var re = matcher(q);
    if (!re) { markOK = msgOK = null; return; }
    markOK = D.marks.map(function (mk) { return always[mk[2]] || re.test(mk[5]) || (mk[6] !== "" && re.test(mk[6])); });
    msgOK = D.msgs.map(function (m) { return always[m[6]] || always[m[7]] || re.test(m[8]) || re.test(D.lanes[m[0]]) || re.test(D.lanes[m[1]]); });
  }

  function clampView() {
    var span = v1 - v0, lo = D.t0, hi = Math.max(D.t1, D.t0 + 1);
    var full = hi - lo;
    if (span > full) { v0 = lo; v1 = hi; return; }
    if (span < 1000) { var c = (v0 + v1) / 2; v0 = c - 500; v1 = c + 500; span = 1000; }
    if (v0 < lo) { v0 = lo; v1 = lo + span; }
    if (v1 > hi) { v1 = hi; v0 = hi - span; }
  }

  function ticks(W) {
    var span = v1 - v0, target = (W - LABEL - RIGHT) / 110;
    var raw = span / Math.max(1, target), p = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = p * (raw / p < 2 ? 2 : raw / p < 5 ? 5 : 10);
    var out = [];
    for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) out.push(t);
    return { step: step, list: out };
  }
  function tickLabel(t, step) {
    var digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / 1e9) - 1e-9)));
    return (t / 1e9).toFixed(digits) + " s";
  }

  var drawn = { arrows: 0, marks: 0, hi: 0, needed: 0, steps: 0 };
  var first = true;

  function render() {
    clampView();
    var W = width(), H = layout() + 6;
    var x0 = LABEL, x1 = W - RIGHT, k = (x1 - x0 - 2 * PAD) / (v1 - v0);
    function X(t) { return x0 + PAD + (t - v0) * k; }
    function vis(a, b) { return b >= v0 && a <= v1; }
    var out = [];
    out.push('<svg xmlns="' + SVGNS + '" width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + " " + H + '">');
    out.push('<defs><marker id="ah" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L8,4L0,8z" fill="#0969da"/></marker>' +
      '<marker id="ahd" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L8,4L0,8z" fill="#8250df"/></marker>' +
      '<marker id="ahh" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L8,4L0,8z" fill="#cf222e"/></marker>' +
      '<marker id="ahm" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L8,4L0,8z" fill="#d97706"/></marker>' +
      '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#dadce0"/><rect width="3" height="6" fill="#9aa0a6"/></pattern>' +
      '<clipPath id="plot"><rect x="' + x0 + '" y="0" width="' + (x1 - x0) + '" height="' + H + '"/></clipPath></defs>');
    // Lanes.
    for (var l = 0; l < D.lanes.length; l++) {
      out.push('<rect x="0" y="' + laneTop[l] + '" width="' + W + '" height="' + laneH[l] + '" fill="' + (fold[l] ? "#f3f4f6" : l % 2 ? "#fbfcfd" : "#ffffff") + '"/>');
    }
    if (STORY) out.push('<rect x="0" y="' + STORYTOP + '" width="' + W + '" height="' + STORY + '" fill="#fff8f0" stroke="#f0d9c0"/>');
    out.push('<g clip-path="url(#plot)">');
    // Grid and axis: a tick's label only where it fits whole.
    var tk = ticks(W);
    tk.list.forEach(function (t) {
      var x = X(t), label = tickLabel(t, tk.step), w = tw(label, SMALL);
      out.push('<line x1="' + x.toFixed(1) + '" y1="' + (AXIS - 4) + '" x2="' + x.toFixed(1) + '" y2="' + H + '" stroke="#eaeef2"/>');
      if (x - w / 2 >= x0 + 2 && x + w / 2 <= x1 - 2) out.push('<text class="tick" x="' + x.toFixed(1) + '" y="' + (AXIS - 8) + '" text-anchor="middle">' + label + "</text>");
    });
    // Partitions and cuts: each group of lanes tinted its own way; their
    // labels go in the strip under the axis with the bursts, in rows.
    var strip = rows(2), stripItems = [];
    D.bands.forEach(function (b, i) {
      if (!vis(b[0], b[1])) return;
      var bx0 = Math.max(x0, X(b[0])), bx1 = Math.min(x1, X(b[1]));
      var tints = b[4] ? ["rgba(207,34,46,.10)", "rgba(130,80,223,.16)"] : ["rgba(130,80,223,.16)", "rgba(9,105,218,.10)", "rgba(191,135,0,.14)", "rgba(26,127,55,.12)"];
      b[3].forEach(function (g, gi) {
        g.forEach(function (ln) {
          out.push('<rect class="hover" data-b="' + i + '" x="' + bx0.toFixed(1) + '" y="' + (laneTop[ln] + 1) + '" width="' + Math.max(1, bx1 - bx0).toFixed(1) + '" height="' + (laneH[ln] - 2) + '" fill="' + tints[gi % tints.length] + '"/>');
        });
      });
      out.push('<line x1="' + X(b[0]).toFixed(1) + '" y1="' + (AXIS + 2) + '" x2="' + X(b[0]).toFixed(1) + '" y2="' + H + '" stroke="#8250df" stroke-dasharray="4 3"/>');
      if (b[1] < D.t1) out.push('<line x1="' + X(b[1]).toFixed(1) + '" y1="' + TOP + '" x2="' + X(b[1]).toFixed(1) + '" y2="' + H + '" stroke="#8250df" stroke-dasharray="1 3"/>');
      stripItems.push({ t: b[0], x: bx0, x1: bx1, label: b[2], attr: 'data-b="' + i + '"', color: "#6639ba", bar: false });
    });
    D.bursts.forEach(function (b, i) {
      if (!vis(b[0], b[1])) return;
      stripItems.push({ t: b[0], x: Math.max(x0, X(b[0])), x1: Math.min(x1, X(b[1])), label: b[2], attr: 'data-u="' + i + '"', color: "#9a3412", bar: true });
    });
    stripItems.sort(function (a, b) { return a.t - b.t; });
    stripItems.forEach(function (it) {
      var label = fit(it.label, Math.max(0, x1 - it.x - 6), SMALL), w = tw(label, SMALL);
      var r = strip.place(it.x, Math.max(it.x + w + 4, it.bar ? it.x1 : 0));
      var y = AXIS + 1 + Math.max(0, r) * ROW;
      if (it.bar) out.push('<rect class="hover" ' + it.attr + ' x="' + it.x.toFixed(1) + '" y="' + (y + 1) + '" width="' + Math.max(2, it.x1 - it.x).toFixed(1) + '" height="' + (ROW - 2) + '" rx="2" fill="#f4a261" fill-opacity=".55"/>');
      if (r >= 0 && label) out.push('<text class="band-label hover" ' + it.attr + ' x="' + (it.x + 3).toFixed(1) + '" y="' + (y + ROW - 3) + '" fill="' + it.color + '">' + esc(label) + "</text>");
    });
    // Crashed, paused and not-started spans.
    D.spans.forEach(function (s, i) {
      if (!vis(s[1], s[2]) || fold[s[0]]) return;
      var sx0 = Math.max(x0, X(s[1])), sx1 = Math.min(x1, X(s[2]));
      var fill = s[3] === 0 ? "url(#hatch)" : s[3] === 1 ? "#ffe8a3" : "#eef0f2";
      out.push('<rect class="hover" data-s="' + i + '" x="' + sx0.toFixed(1) + '" y="' + (laneTop[s[0]] + 8) + '" width="' + Math.max(1, sx1 - sx0).toFixed(1) + '" height="' + (LANE - 16) + '" fill="' + fill + '" fill-opacity="' + (s[3] === 0 ? ".85" : "1") + '"/>');
    });
    // Lane axes.
    for (l = 0; l < D.lanes.length; l++) {
      out.push('<line x1="' + x0 + '" y1="' + laneY(l) + '" x2="' + x1 + '" y2="' + laneY(l) + '" stroke="' + (fold[l] ? "#d8dee4" : "#c5ccd3") + '"/>');
    }

    // The story: the key's state over time, and the steps that changed it.
    drawn.steps = 0;
    if (STORY) {
      var st = D.story.steps, sy = STORYTOP, segY = sy + 5, segH = 18, markY = segY + segH / 2;
      // A segment per state, from the step that entered it (a step that
      // leaves the state as it was does not start a new one).
      var states = [], changed = {}, prev = null;
      st.forEach(function (s, i) {
        if (s[4] !== "" && (s[4] !== prev || s[5])) { states.push(i); changed[i] = true; prev = s[4]; }
      });
      states.forEach(function (i, j) {
        var s = st[i], tEnd = j + 1 < states.length ? st[states[j + 1]][1] : D.t1;
        if (!vis(s[1], tEnd)) return;
        var a = Math.max(x0, X(s[1])), b = Math.min(x1, X(tEnd));
        var bad = s[5], fill = bad ? "#ffd7d5" : j % 2 ? "#dbeafe" : "#e0f2fe";
        out.push('<rect class="hover" data-g="' + i + '" x="' + a.toFixed(1) + '" y="' + segY + '" width="' + Math.max(1, b - a).toFixed(1) + '" height="' + segH + '" fill="' + fill + '" stroke="' + (bad ? "#cf222e" : "#7aa7d8") + '" stroke-width=".8"/>');
        var label = fit(s[4], b - a - 14, FONT);
        if (label) out.push('<text class="story-state" x="' + (a + 9).toFixed(1) + '" y="' + (segY + 13) + '">' + esc(label) + "</text>");
      });
      var labels = rows(2), order = [];
      st.forEach(function (s, i) { if (s[1] >= v0 && s[1] <= v1) order.push(i); });
      // Words for the bad step first, then the steps that changed the
      // state, then the others, each in time order.
      function rank(i) { return st[i][5] ? 0 : changed[i] ? 1 : 2; }
      order.sort(function (a, b) { return rank(a) - rank(b) || a - b; });
      order.forEach(function (i) {
        var s = st[i], x = X(s[1]);
        drawn.steps++;
        if (!fold[s[2]]) out.push('<line x1="' + x.toFixed(1) + '" y1="' + (sy + STORY) + '" x2="' + x.toFixed(1) + '" y2="' + laneY(s[2]) + '" stroke="' + (s[5] ? "#cf222e" : "#d97706") + '" stroke-opacity=".45" stroke-dasharray="2 3"/>');
        out.push('<circle class="hover" data-st="' + i + '" cx="' + x.toFixed(1) + '" cy="' + markY + '" r="' + (s[5] ? 7 : 5) + '" fill="' + (s[5] ? "#cf222e" : "#d97706") + '" stroke="#fff" stroke-width="1.5"/>');
        var node = D.lanes[s[2]], named = s[3].indexOf(node + " ") === 0 || s[3].indexOf(node + ":") === 0;
        var text = named ? s[3] : node + ": " + s[3], font = s[5] ? BOLD : FONT;
        text = fit(text, Math.min(320, x1 - x0 - 4), font);
        var w = tw(text, font), a = Math.max(x0 + 2, Math.min(x - 6, x1 - w - 2));
        var r = text ? labels.place(a, a + w) : -1;
        if (r >= 0) out.push('<text class="hover story-step' + (s[5] ? " bad" : "") + '" data-st="' + i + '" x="' + a.toFixed(1) + '" y="' + (segY + segH + 14 + r * ROW) + '">' + esc(text) + "</text>");
      });
    }

    // Messages.
    var msgs = [], special = [];
    if (show.msg) {
      for (var i = 0; i < D.msgs.length; i++) {
        var m = D.msgs[i];
        if (!vis(m[2], m[3]) || (msgOK && !msgOK[i])) continue;
        if (mattered[m[6]] || hiSeq[m[6]] || hiSeq[m[7]]) special.push(i); else msgs.push(i);
      }
    }
    function endPoint(m) {
      var ya = laneY(m[0]), yb = laneY(m[1]);
      var xa = X(m[2]), xb = X(m[3]);
      if (m[4] === 1 && m[3] === m[2]) { // dropped at the sender: a stub toward the receiver
        xb = xa + 14; yb = ya + (yb - ya) * 0.35;
      }
      return [xa, ya, xb, yb];
    }
    function arrow(i) {
      var m = D.msgs[i], p = endPoint(m), hi = hiSeq[m[6]] || hiSeq[m[7]], mat = mattered[m[6]];
      var stroke = hi ? "#cf222e" : mat ? "#d97706" : m[4] === 1 ? "#cf222e" : m[5] ? "#8250df" : m[4] === 2 ? "#8c959f" : "#0969da";
      var dim = D.story && !hi && !mat ? ' stroke-opacity=".45"' : "";
      var dash = m[5] ? ' stroke-dasharray="5 3"' : m[4] === 2 ? ' stroke-dasharray="2 3"' : "";
      var marker = m[4] === 0 ? (hi ? ' marker-end="url(#ahh)"' : mat ? ' marker-end="url(#ahm)"' : m[5] ? ' marker-end="url(#ahd)"' : ' marker-end="url(#ah)"') : "";
      var s = '<g class="hover" data-m="' + i + '"><line x1="' + p[0].toFixed(1) + '" y1="' + p[1] + '" x2="' + p[2].toFixed(1) + '" y2="' + p[3].toFixed(1) + '" stroke="transparent" stroke-width="9"/>' +
        '<line x1="' + p[0].toFixed(1) + '" y1="' + p[1] + '" x2="' + p[2].toFixed(1) + '" y2="' + p[3].toFixed(1) + '" stroke="' + stroke + '" stroke-width="' + (hi || mat ? 2.6 : 1.3) + '"' + dim + dash + marker + "/>";
      if (m[4] === 1) s += '<path d="M' + (p[2] - 4).toFixed(1) + "," + (p[3] - 4).toFixed(1) + "l8,8m0,-8l-8,8" + '" stroke="#cf222e" stroke-width="2.2"/>';
      return s + '<circle cx="' + p[0].toFixed(1) + '" cy="' + p[1] + '" r="' + (mat ? 3 : 2) + '" fill="' + stroke + '"/></g>';
    }
    drawn.arrows = msgs.length + special.length;
    if (msgs.length > INDIVIDUAL) {
      var paths = { d: [], p: [], x: [], f: [] };
      msgs.forEach(function (i) {
        var m = D.msgs[i], p = endPoint(m);
        var seg = "M" + p[0].toFixed(1) + "," + p[1] + "L" + p[2].toFixed(1) + "," + p[3].toFixed(1);
        (m[4] === 1 ? paths.x : m[4] === 2 ? paths.f : m[5] ? paths.p : paths.d).push(seg);
      });
      out.push('<path d="' + paths.d.join("") + '" stroke="#0969da" stroke-opacity=".35" fill="none"/>');
      out.push('<path d="' + paths.p.join("") + '" stroke="#8250df" stroke-opacity=".5" fill="none"/>');
      out.push('<path d="' + paths.f.join("") + '" stroke="#8c959f" stroke-opacity=".5" fill="none"/>');
      out.push('<path d="' + paths.x.join("") + '" stroke="#cf222e" stroke-opacity=".5" fill="none"/>');
      notice.textContent = msgs.length + " messages in view: drawn without arrowheads or hover; zoom in (wheel) to see each one.";
    } else {
      notice.textContent = "";
      msgs.forEach(function (i) { out.push(arrow(i)); });
    }
    special.forEach(function (i) { out.push(arrow(i)); }); // the ones that matter: always one by one, on top

    // Marks.
    var marks = [];
    for (i = 0; i < D.marks.length; i++) {
      var mk = D.marks[i];
      if (mk[1] < v0 || mk[1] > v1 || fold[mk[0]]) continue;
      if (mk[4] === 3 && !show.kernel) continue;
      if (mk[4] === 4 && (!show.note || !kindShow[D.kinds[mk[3]]])) continue;
      if (markOK && !markOK[i]) continue;
      marks.push(i);
    }
    drawn.marks = marks.length;
    function markShape(mk, i) {
      var x = X(mk[1]), y = laneY(mk[0]), attrs = ' class="hover" data-k="' + i + '"';
      switch (mk[4]) {
        case 0: return '<path' + attrs + ' d="M' + x.toFixed(1) + "," + (y - 9) + "l6,9l-6,9z" + '" fill="#1a7f37"/>';
        case 1: return '<path' + attrs + ' d="M' + (x - 6).toFixed(1) + "," + (y - 6) + "l12,12m0,-12l-12,12" + '" stroke="#1f2328" stroke-width="3"/>';
        case 2: return '<path' + attrs + ' d="M' + x.toFixed(1) + "," + (y - 7) + "l6,7l-6,7l-6,-7z" + '" fill="#bc4c00" stroke="#fff"/>';
        case 3: return '<rect' + attrs + ' x="' + (x - 1).toFixed(1) + '" y="' + (y - 5) + '" width="2" height="10" fill="#8c959f"/>';
        default: return '<rect' + attrs + ' x="' + (x - 3.5).toFixed(1) + '" y="' + (y - 13) + '" width="7" height="7" rx="1.5" fill="' + kindColor(mk[3]) + '" stroke="#fff"/>';
      }
    }
    if (marks.length > INDIVIDUAL) {
      var byColor = {};
      marks.forEach(function (i) {
        var mk = D.marks[i], x = X(mk[1]).toFixed(1), y = laneY(mk[0]);
        var c = mk[4] === 4 ? kindColor(mk[3]) : mk[4] === 3 ? "#8c959f" : "#bc4c00";
        (byColor[c] = byColor[c] || []).push("M" + x + "," + (y - 12) + "v6");
      });
      Object.keys(byColor).sort().forEach(function (c) {
        out.push('<path d="' + byColor[c].join("") + '" stroke="' + c + '" stroke-width="2"/>');
      });
      // Starts, crashes and faults are few: always drawn one by one.
      marks.forEach(function (i) { if (D.marks[i][4] < 3) out.push(markShape(D.marks[i], i)); });
    } else {
      marks.forEach(function (i) { out.push(markShape(D.marks[i], i)); });
    }

    // The faults the failure needs, in words on the lanes they hit (under
    // the lane's axis, where no mark is).
    drawn.needed = 0;
    var laneRows = {};
    D.needed.forEach(function (n, i) {
      if (!vis(n[1], n[2])) return;
      drawn.needed++;
      var x = X(n[1]), xe = Math.min(x1, X(n[2]));
      n[3].forEach(function (ln, j) {
        if (fold[ln]) return;
        var y = laneY(ln);
        if (xe > x + 1) out.push('<rect x="' + Math.max(x0, x).toFixed(1) + '" y="' + (y + 2) + '" width="' + (xe - Math.max(x0, x)).toFixed(1) + '" height="3" fill="#ea580c" fill-opacity=".55"/>');
        out.push('<path class="hover" data-n="' + i + '" d="M' + x.toFixed(1) + "," + (y - 9) + "l9,9l-9,9l-9,-9z" + '" fill="#ea580c" stroke="#7c2d12" stroke-width="1.5"/>');
        if (j > 0) return;
        // Right of the diamond, or left of it near the end of the view.
        var label = fit(n[4], Math.min(360, x1 - x0 - 12), BOLD), w = tw(label, BOLD);
        var lx = x + 10 + w <= x1 - 2 ? x + 10 : Math.max(x0 + 2, x - 10 - w);
        var lr = laneRows[ln] = laneRows[ln] || rows(1);
        if (label && lr.place(lx, lx + w) >= 0) {
          out.push('<text class="hover needed-label" data-n="' + i + '" x="' + lx.toFixed(1) + '" y="' + (y + 15) + '">' + esc(label) + "</text>");
        }
      });
    });

    // The violation.
    // The violation: each event ringed, its number beside it where there
    // is room (right, else left; close neighbours share one ring's label).
    drawn.hi = 0;
    var hiRows = {};
    D.hi.forEach(function (h, i) {
      if (h[1] < v0 || h[1] > v1) return;
      drawn.hi++;
      var x = X(h[1]), y = laneY(h[2]), label = "#" + h[0], w = tw(label, BOLD);
      out.push('<line x1="' + x.toFixed(1) + '" y1="' + TOP + '" x2="' + x.toFixed(1) + '" y2="' + H + '" stroke="#cf222e" stroke-width="1.2" stroke-dasharray="6 3"/>');
      var g = '<g class="hover" data-h="' + i + '"><circle cx="' + x.toFixed(1) + '" cy="' + y + '" r="10" fill="rgba(207,34,46,.18)" stroke="#cf222e" stroke-width="2"/>';
      var lr = hiRows[h[2]] = hiRows[h[2]] || rows(1), lx = x + 12;
      if (lx + w > x1 - 2 || lr.place(lx, lx + w) < 0) {
        lx = x - 12 - w;
        if (lx < x0 + 2 || lr.place(lx, lx + w) < 0) lx = null;
      }
      if (lx !== null) g += '<text class="hi-label" x="' + lx.toFixed(1) + '" y="' + (y - 8) + '">' + label + "</text>";
      out.push(g + "</g>");
    });
    if (flash && flash[0] >= v0 && flash[0] <= v1 && flash[1] >= 0) {
      out.push('<circle cx="' + X(flash[0]).toFixed(1) + '" cy="' + laneY(flash[1]) + '" r="14" fill="none" stroke="#0969da" stroke-width="3" stroke-opacity=".8"/>');
    }
    out.push("</g>");

    // Lane labels on top, in a fixed column; a click folds or unfolds.
    out.push('<rect x="0" y="0" width="' + (LABEL - 4) + '" height="' + H + '" fill="#f6f8fa"/>');
    out.push('<line x1="' + (LABEL - 4) + '" y1="0" x2="' + (LABEL - 4) + '" y2="' + H + '" stroke="#d0d7de"/>');
    if (STRIP) out.push('<text class="tick" x="8" y="' + (AXIS + ROW - 2) + '">faults, bursts</text>');
    if (STORY) {
      out.push('<text class="lane-label story-title" x="8" y="' + (STORYTOP + 16) + '">story</text>');
      out.push('<text class="tick" x="8" y="' + (STORYTOP + 31) + '"><title>' + esc(D.story.key) + "</title>" + esc(fit(D.story.key, LABEL - 16, SMALL)) + "</text>");
    }
    var folded = 0;
    for (l = 0; l < D.lanes.length; l++) {
      if (fold[l]) folded++;
      var name = (fold[l] ? "▸ " : "▾ ") + D.lanes[l];
      name = fit(name, LABEL - 14, fold[l] ? SMALL : "600 12px system-ui, 'DejaVu Sans', sans-serif");
      out.push('<text class="lane-label' + (fold[l] ? " folded" : "") + '" data-lane="' + l + '" x="6" y="' + (laneY(l) + 4) + '"><title>' + esc(D.lanes[l]) + (fold[l] ? " (folded: click to unfold)" : " (click to fold)") + "</title>" + esc(name) + "</text>");
    }
    out.push("</svg>");
    chart.innerHTML = out.join("");
    rangeEl.textContent = fmt(v0) + " – " + fmt(v1) + "  (" + fmtDur(v1 - v0) + " of " + fmtDur(D.t1 - D.t0) + ")";
    var full = Math.max(1, D.t1 - D.t0);
    viewport.style.left = (100 * (v0 - D.t0) / full) + "%";
    viewport.style.width = Math.max(0.3, 100 * (v1 - v0) / full) + "%";
    if (first) {
      first = false;
      document.body.setAttribute("data-view", Math.round(v0) + " " + Math.round(v1));
    }
    document.body.setAttribute("data-rendered", "lanes=" + D.lanes.length + " arrows=" + drawn.arrows + " marks=" + drawn.marks + " violation=" + drawn.hi +
      " spans=" + D.spans.length + " bands=" + D.bands.length + " story=" + (STORY ? 1 : 0) + " steps=" + drawn.steps + " needed=" + drawn.needed +
      " folded=" + folded + " overlaps=" + overlaps(chart.querySelectorAll("svg text"), x0) + " clipped=" + clipped(x0, x1));
  }

  // clipped counts the marks and axis labels in view that the plot's frame
  // cuts (a mark at either end of the view is drawn whole, a tick's label
  // whole or not at all).
  function clipped(x0, x1) {
    var c = chart.getBoundingClientRect(), n = 0;
    chart.querySelectorAll("[data-k], [data-n], [data-h] circle, g text.tick").forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.width > 0 && (r.left < c.left + x0 - 0.5 || r.right > c.left + x1 + 0.5)) n++;
    });
    return n;
  }

  // overlaps counts the pairs of labels whose boxes intersect: the page's
  // own check that its words stay readable (the browser test reads it).
  function overlaps(list, left) {
    var boxes = [];
    for (var i = 0; i < list.length && boxes.length < 600; i++) {
      var r = list[i].getBoundingClientRect(), c = chart.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      var inPlot = r.left >= c.left + left - 1;
      boxes.push({ l: r.left, r: r.right, t: r.top, b: r.bottom, p: inPlot });
    }
    return countOverlaps(boxes);
  }
  function countOverlaps(boxes) {
    var n = 0;
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i], b = boxes[j];
        if (a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5) n++;
      }
    }
    return n;
  }

  // What an element of the chart says about itself: [words, raw].
  function describe(el) {
    var a;
    if ((a = el.getAttribute("data-m")) !== null) {
      var m = D.msgs[+a], body = m[8].replace(/^#\d+ \S+ (conn=\d+ )?/, ""), conn = /^#\d+ \S+ conn=(\d+)/.exec(m[8]);
      var s = "message #" + m[8].slice(1).split(" ")[0] + " " + D.lanes[m[0]] + " → " + D.lanes[m[1]] + (conn ? " (conn " + conn[1] + ")" : "") + (m[5] ? ", a duplicate" : "") + (mattered[m[6]] ? ", one that mattered" : "");
      s += "\n" + body;
      s += "\nsent " + fmt(m[2]) + " (event #" + m[6] + ")";
      if (m[4] === 0) s += "\ndelivered " + fmt(m[3]) + " (event #" + m[7] + "), after " + fmtDur(m[3] - m[2]);
      if (m[4] === 1) s += "\nDROPPED at " + fmt(m[3]) + " (event #" + m[7] + "): " + m[9];
      if (m[4] === 2) s += "\nstill in flight when the trace ended";
      return [s, m[8]];
    }
    if ((a = el.getAttribute("data-k")) !== null) {
      var k = D.marks[+a];
      return ["#" + k[2] + " · " + fmt(k[1]) + " · " + D.lanes[k[0]] + "\n" + k[5], k[6] ? D.kinds[k[3]] + " " + pretty(k[6]) : ""];
    }
    if ((a = el.getAttribute("data-s")) !== null) {
      var sp = D.spans[+a];
      return [D.lanes[sp[0]] + " " + sp[4] + " from " + fmt(sp[1]) + " to " + (sp[2] >= D.t1 ? "the end" : fmt(sp[2])) + " (" + fmtDur(sp[2] - sp[1]) + ")", ""];
    }
    if ((a = el.getAttribute("data-b")) !== null) {
      var b = D.bands[+a];
      return [b[2] + " from " + fmt(b[0]) + " to " + (b[1] >= D.t1 ? "the end" : fmt(b[1])), ""];
    }
    if ((a = el.getAttribute("data-u")) !== null) {
      var u = D.bursts[+a];
      return [u[2] + " from " + fmt(u[0]) + " to " + fmt(u[1]), ""];
    }
    if ((a = el.getAttribute("data-h")) !== null) {
      var h = D.hi[+a];
      return ["VIOLATING EVENT #" + h[0] + " · " + fmt(h[1]) + " · " + D.lanes[h[2]] + "\n" + h[4], rawOf(h[0])];
    }
    if ((a = el.getAttribute("data-n")) !== null) {
      var n = D.needed[+a];
      return ["NEEDED FAULT #" + n[0] + " · " + fmt(n[1]) + "\n" + n[4] + (n[2] > n[1] ? "\nuntil " + fmt(n[2]) + " (" + fmtDur(n[2] - n[1]) + ")" : ""), rawOf(n[0])];
    }
    if ((a = el.getAttribute("data-st")) !== null) {
      var x = D.story.steps[+a];
      return ["STORY of " + D.story.key + ", step " + (+a + 1) + (x[5] ? " (the one that breaks it)" : "") + "\n#" + x[0] + " · " + fmt(x[1]) + " · " + D.lanes[x[2]] + "\n" + x[3] + (x[4] ? "\nthen: " + x[4] : ""), rawOf(x[0])];
    }
    if ((a = el.getAttribute("data-g")) !== null) {
      var g = D.story.steps[+a];
      return [D.story.key + " from " + fmt(g[1]) + ": " + g[4], ""];
    }
    return null;
  }
  function pretty(raw) {
    try { return JSON.stringify(JSON.parse(raw), null, 2); } catch (e) { return raw; }
  }
  var markBySeq = null;
  function rawOf(seq) {
    if (!markBySeq) {
      markBySeq = {};
      D.marks.forEach(function (mk, i) { markBySeq[mk[2]] = i; });
    }
    var i = markBySeq[seq];
    return i === undefined || !D.marks[i][6] ? "" : D.kinds[D.marks[i][3]] + " " + pretty(D.marks[i][6]);
  }
  function target(e) {
    var el = e.target;
    while (el && el !== chart) {
      var c = el.getAttribute && el.getAttribute("class");
      if (c && (" " + c + " ").indexOf(" hover ") >= 0) return el;
      el = el.parentNode;
    }
    return null;
  }
  function showDetails(d) {
    detailsText.textContent = d[0];
    detailsRaw.textContent = d[1] || "";
    detailsRaw.hidden = true;
    rawToggle.hidden = !d[1];
    rawToggle.textContent = "raw";
  }
  rawToggle.addEventListener("click", function () {
    detailsRaw.hidden = !detailsRaw.hidden;
    rawToggle.textContent = detailsRaw.hidden ? "raw" : "hide raw";
  });
  var tip = document.createElement("div");
  tip.className = "tip";
  document.body.appendChild(tip);
  chart.addEventListener("mousemove", function (e) {
    if (drag) return;
    var el = target(e), s = el && describe(el);
    if (!s) { tip.style.display = "none"; return; }
    tip.textContent = s[0];
    tip.style.display = "block";
    var tx = e.clientX + 14, ty = e.clientY + 14;
    if (tx + tip.offsetWidth > window.innerWidth - 8) tx = e.clientX - tip.offsetWidth - 10;
    if (ty + tip.offsetHeight > window.innerHeight - 8) ty = e.clientY - tip.offsetHeight - 10;
    tip.style.left = tx + "px";
    tip.style.top = ty + "px";
  });
  chart.addEventListener("mouseleave", function () { tip.style.display = "none"; });

  // Zoom and pan.
  function zoom(f, at) {
    var c = at === undefined ? (v0 + v1) / 2 : at;
    v0 = c - (c - v0) * f;
    v1 = c + (v1 - c) * f;
    render();
  }
  function timeAt(clientX) {
    var r = chart.getBoundingClientRect(), W = width();
    var x = Math.max(LABEL + PAD, Math.min(W - RIGHT - PAD, clientX - r.left));
    return v0 + (x - LABEL - PAD) / (W - RIGHT - LABEL - 2 * PAD) * (v1 - v0);
  }
  chart.addEventListener("wheel", function (e) {
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, timeAt(e.clientX));
  }, { passive: false });
  var drag = null;
  chart.addEventListener("mousedown", function (e) {
    drag = { x: e.clientX, v0: v0, v1: v1, moved: false };
    chart.classList.add("dragging");
  });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return;
    var per = (drag.v1 - drag.v0) / (width() - RIGHT - LABEL - 2 * PAD);
    v0 = drag.v0 - dx * per;
    v1 = drag.v1 - dx * per;
    render();
  });
  window.addEventListener("mouseup", function (e) {
    if (!drag) return;
    var moved = drag.moved;
    drag = null;
    chart.classList.remove("dragging");
    if (moved) return;
    var lane = e.target && e.target.closest && e.target.closest("[data-lane]");
    if (lane) {
      var l = +lane.getAttribute("data-lane");
      fold[l] = !fold[l];
      render();
      return;
    }
    var el = target(e), s = el && describe(el);
    if (s) showDetails(s);
  });
  overview.addEventListener("click", function (e) {
    var r = overview.getBoundingClientRect();
    var c = D.t0 + (e.clientX - r.left) / r.width * (D.t1 - D.t0), half = (v1 - v0) / 2;
    v0 = c - half; v1 = c + half;
    render();
  });
  document.querySelectorAll(".controls button").forEach(function (b) {
    b.addEventListener("click", function () {
      var span = v1 - v0;
      switch (b.getAttribute("data-act")) {
        case "fit": v0 = D.t0; v1 = D.t1; break;
        case "focus": v0 = D.focus[0]; v1 = D.focus[1]; break;
        case "in": zoom(0.5); return;
        case "out": zoom(2); return;
        case "left": v0 -= span / 3; v1 -= span / 3; break;
        case "right": v0 += span / 3; v1 += span / 3; break;
        case "fold": for (var l = 0; l < D.lanes.length; l++) fold[l] = !keep[l]; break;
        case "unfold": fold = []; break;
      }
      render();
    });
  });

  // Overview: where the trouble is in the whole run, with the needed
  // faults and the violation named.
  (function () {
    var full = Math.max(1, D.t1 - D.t0), html = [];
    function pos(t) { return 100 * (t - D.t0) / full; }
    D.spans.forEach(function (s) {
      if (s[3] > 1) return;
      html.push('<div class="ov" title="' + esc(D.lanes[s[0]] + " " + s[4] + " " + fmt(s[1]) + " – " + fmt(s[2])) + '" style="left:' + pos(s[1]) + "%;width:" + Math.max(0.2, 100 * (s[2] - s[1]) / full) + "%;background:" + (s[3] === 0 ? "#9aa0a6" : "#f2cc60") + ';opacity:.5"></div>');
    });
    D.bands.forEach(function (b) {
      html.push('<div class="ov" title="' + esc(b[2]) + '" style="left:' + pos(b[0]) + "%;width:" + Math.max(0.2, 100 * (b[1] - b[0]) / full) + '%;background:rgba(130,80,223,.3)"></div>');
    });
    var W = overview.clientWidth || 1200, used = rows(1);
    function label(t, text, cls) {
      var x = W * pos(t) / 100, w = tw(text, "10px system-ui, 'DejaVu Sans', sans-serif") + 4;
      var a = Math.min(x + 3, W - w);
      if (used.place(a, a + w) >= 0) html.push('<span class="ovl ' + cls + '" style="left:' + a.toFixed(1) + 'px">' + esc(text) + "</span>");
    }
    D.hi.forEach(function (h) {
      html.push('<div class="ov" title="' + esc("#" + h[0] + " " + h[4]) + '" style="left:' + pos(h[1]) + '%;width:2px;background:#cf222e"></div>');
    });
    D.needed.forEach(function (n) {
      html.push('<div class="ov" title="' + esc("needed: " + n[4]) + '" style="left:' + pos(n[1]) + "%;width:" + Math.max(0.3, 100 * (n[2] - n[1]) / full) + '%;background:#ea580c;opacity:.7"></div>');
    });
    if (D.hi.length) label(D.hi[0][1], "violation", "hi");
    D.needed.forEach(function (n) { label(n[1], n[4], "needed"); });
    overview.insertAdjacentHTML("afterbegin", html.join(""));
  })();

  // Filters.
  (function () {
    var f = document.getElementById("filters"), html = [];
    html.push('<label><input type="checkbox" data-f="msg" checked> messages</label>');
    html.push('<label><input type="checkbox" data-f="kernel"> timers, dials, breaks</label>');
    Object.keys(noteKinds).map(Number).sort(function (a, b) { return D.kinds[a] < D.kinds[b] ? -1 : 1; }).forEach(function (k) {
      html.push('<label><input type="checkbox" data-kind="' + esc(D.kinds[k]) + '" checked> <i style="display:inline-block;width:8px;height:8px;background:' + kindColor(k) + '"></i> ' + esc(D.kinds[k]) + "</label>");
    });
    f.innerHTML = html.join("");
    f.addEventListener("change", function (e) {
      var el = e.target;
      if (el.getAttribute("data-f")) show[el.getAttribute("data-f")] = el.checked;
      if (el.getAttribute("data-kind") !== null) kindShow[el.getAttribute("data-kind")] = el.checked;
      render();
    });
    // Suggested keys: the story's key, the last word of it, and the
    // tokens and ids its steps name.
    var seen = {}, opts = [];
    function add(s) { if (s && !seen[s]) { seen[s] = true; opts.push(s); } }
    if (D.story) {
      var words = D.story.key.split(/\s+/);
      add(words[words.length - 1]);
      D.story.steps.forEach(function (s) {
        (s[3] + " " + s[4]).replace(/[A-Za-z]+-[\d]+(\.[\d]+)+/g, function (m) { add(m); return m; });
      });
    }
    document.getElementById("keys").innerHTML = opts.map(function (o) { return '<option value="' + esc(o) + '">'; }).join("");
    var pending = 0;
    keyInput.addEventListener("input", function () {
      clearTimeout(pending);
      pending = setTimeout(function () { setQuery(keyInput.value); render(); }, 120);
    });
  })();

  // Links to events (violation card, story, context table, linearization)
  // move the timeline there and ring the event.
  var where = null;
  function locate(seq) {
    if (!where) {
      where = {};
      D.marks.forEach(function (mk) { where[mk[2]] = mk[0]; });
      D.msgs.forEach(function (m) { where[m[6]] = m[0]; if (m[7]) where[m[7]] = m[1]; });
      D.hi.forEach(function (h) { where[h[0]] = h[2]; });
      if (D.story) D.story.steps.forEach(function (s) { where[s[0]] = s[2]; });
    }
    return where[seq] === undefined ? -1 : where[seq];
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a.seq");
    if (!a) return;
    var t = +a.getAttribute("data-t"), t1 = a.hasAttribute("data-t1") ? +a.getAttribute("data-t1") : t;
    var span = Math.min(v1 - v0, Math.max(2e9, (D.t1 - D.t0) / 20));
    span = Math.max(span, (t1 - t) * 1.5);
    v0 = (t + t1) / 2 - span / 2; v1 = (t + t1) / 2 + span / 2;
    var seq = a.hasAttribute("data-seq") ? +a.getAttribute("data-seq") : -1, lane = seq >= 0 ? locate(seq) : -1;
    if (lane >= 0) fold[lane] = false;
    flash = [t, lane];
    render();
    var i = markBySeqIndex(seq);
    showDetails(i >= 0 ? describe(chart.querySelector('[data-k="' + i + '"]') || fakeMark(i)) : [a.textContent.replace(/\s+/g, " ").trim(), ""]);
  });
  function markBySeqIndex(seq) {
    rawOf(-1);
    return markBySeq[seq] === undefined ? -1 : markBySeq[seq];
  }
  function fakeMark(i) {
    return { getAttribute: function (n) { return n === "data-k" ? String(i) : null; } };
  }

  var copy = document.getElementById("copy-replay");
  if (copy) {
    copy.addEventListener("click", function () {
      var text = document.getElementById("replay").textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(text).catch(function () {});
      copy.textContent = "copied";
    });
  }

  // The first view: lanes with nothing in it start folded, except the
  // ones the story and the failure touch.
  (function () {
    var busy = {};
    D.marks.forEach(function (mk) { if (mk[1] >= v0 && mk[1] <= v1 && mk[4] !== 3) busy[mk[0]] = true; });
    D.msgs.forEach(function (m) { if (m[3] >= v0 && m[2] <= v1) { busy[m[0]] = true; busy[m[1]] = true; } });
    D.spans.forEach(function (s) { if (s[3] < 2 && s[2] >= v0 && s[1] <= v1) busy[s[0]] = true; });
    // With a story, the lanes it does not touch start folded too.
    for (var l = 0; l < D.lanes.length; l++) fold[l] = !keep[l] && (!busy[l] || !!D.story);
  })();

  // "#key=104" in the address opens the page filtered by that key.
  if (location.hash.indexOf("#key=") === 0) {
    keyInput.value = decodeURIComponent(location.hash.slice(5));
    setQuery(keyInput.value);
  }

  var lastW = 0;
  window.addEventListener("resize", function () { if (width() !== lastW) { lastW = width(); render(); } });
  render();
  lastW = width();

  // The linearization view's labels: the same check as the timeline's.
  (function () {
    var cells = document.querySelectorAll("#linearization .linop > span:not(.track)"), boxes = [];
    for (var i = 0; i < cells.length; i++) {
      var r = cells[i].getBoundingClientRect();
      if (r.width > 0 && r.height > 0) boxes.push({ l: r.left, r: r.right, t: r.top, b: r.bottom });
    }
    document.body.setAttribute("data-lin", "labels=" + boxes.length + " overlaps=" + countOverlaps(boxes));
  })();

  // With "#selftest" in the address, the page works every control once and
  // describes every kind of element, so that a headless browser test runs
  // all of this script; errors land in data-errors like any other.
  if (location.hash === "#selftest") {
    var said = 0;
    document.querySelectorAll(".controls button").forEach(function (b) { b.click(); });
    chart.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: 400, clientY: 100, bubbles: true, cancelable: true }));
    document.querySelectorAll("#filters input").forEach(function (el) {
      el.click();
      el.click();
    });
    setQuery("1"); render(); setQuery(""); render();
    var seq = document.querySelector("a.seq");
    if (seq) seq.click();
    rawToggle.click();
    var lane = chart.querySelector("[data-lane]");
    if (lane) {
      var lr = lane.getBoundingClientRect();
      chart.dispatchEvent(new MouseEvent("mousedown", { clientX: lr.left + 2, clientY: lr.top + 2, bubbles: true }));
      lane.dispatchEvent(new MouseEvent("mouseup", { clientX: lr.left + 2, clientY: lr.top + 2, bubbles: true }));
    }
    fold = [];
    v0 = D.t0; v1 = D.t1;
    render();
    ["data-m", "data-k", "data-s", "data-b", "data-u", "data-h", "data-n", "data-st", "data-g"].forEach(function (a) {
      var el = chart.querySelector("[" + a + "]");
      if (el && describe(el)) said++;
    });
    v0 = D.focus[0]; v1 = D.focus[1];
    render();
    var hover = chart.querySelector("[data-m] line, [data-k]"), tipShown = 0;
    if (hover) {
      var r = hover.getBoundingClientRect();
      hover.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + 1, clientY: r.top + 1, bubbles: true }));
      tipShown = tip.style.display === "block" && tip.textContent.length > 0 ? 1 : 0;
      chart.dispatchEvent(new MouseEvent("mouseleave"));
    }
    document.body.setAttribute("data-selftest", "ok described=" + said + " tip=" + tipShown);
  }
})();
