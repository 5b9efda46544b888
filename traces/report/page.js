/* fencesim report: draws the timeline from the JSON in #timeline-data.
   No network access, no external code. Layout is in CSS pixels; time is in
   simulated nanoseconds. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("timeline-data").textContent);
  var chart = document.getElementById("chart");
  var details = document.getElementById("details");
  var notice = document.getElementById("notice");
  var rangeEl = document.getElementById("range");
  var overview = document.getElementById("overview");
  var viewport = document.getElementById("viewport");
  var SVGNS = "http://www.w3.org/2000/svg";

  var LABEL = 120, RIGHT = 14, AXIS = 24, LANE = 36;
  var BURST = D.bursts.length ? 12 : 0;
  var TOP = AXIS + BURST + 4;
  var INDIVIDUAL = 2500; // above this many items in view, draw them as one path
  var PALETTE = ["#bf3989", "#9a6700", "#116329", "#0550ae", "#bc4c00", "#6639ba", "#1b7c83", "#6e7781"];

  var hiSeq = {};
  D.hi.forEach(function (h) { hiSeq[h[0]] = true; });
  var show = { msg: true, kernel: false, note: true };
  var kindShow = {};
  D.kinds.forEach(function (k) { kindShow[k] = true; });
  var v0 = D.focus[0], v1 = D.focus[1];

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fmt(ns) {
    var neg = ns < 0;
    if (neg) ns = -ns;
    var s = Math.floor(ns / 1e9), ms = Math.floor((ns % 1e9) / 1e6);
    var out = s + "." + ("00" + ms).slice(-3) + "s";
    var span = v1 - v0;
    if (span < 50e6) out = (ns / 1e9).toFixed(6) + "s";
    return (neg ? "-" : "") + out;
  }
  function laneY(l) { return TOP + l * LANE + LANE / 2; }
  function width() { return Math.max(600, chart.clientWidth || 1200); }
  function height() { return TOP + D.lanes.length * LANE + 6; }
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
    return (t / 1e9).toFixed(digits) + "s";
  }

  var drawn = { arrows: 0, marks: 0, hi: 0 };

  function render() {
    clampView();
    var W = width(), H = height();
    var x0 = LABEL, x1 = W - RIGHT, k = (x1 - x0) / (v1 - v0);
    function X(t) { return x0 + (t - v0) * k; }
    function vis(a, b) { return b >= v0 && a <= v1; }
    var out = [];
    out.push('<svg xmlns="' + SVGNS + '" width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + " " + H + '">');
    out.push('<defs><marker id="ah" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L8,4L0,8z" fill="#0969da"/></marker>' +
      '<marker id="ahd" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L8,4L0,8z" fill="#8250df"/></marker>' +
      '<marker id="ahh" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L8,4L0,8z" fill="#cf222e"/></marker>' +
      '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#dadce0"/><rect width="3" height="6" fill="#9aa0a6"/></pattern>' +
      '<clipPath id="plot"><rect x="' + x0 + '" y="0" width="' + (x1 - x0) + '" height="' + H + '"/></clipPath></defs>');
    // Lanes.
    for (var l = 0; l < D.lanes.length; l++) {
      out.push('<rect x="0" y="' + (TOP + l * LANE) + '" width="' + W + '" height="' + LANE + '" fill="' + (l % 2 ? "#fbfcfd" : "#ffffff") + '"/>');
    }
    out.push('<g clip-path="url(#plot)">');
    // Grid and axis.
    var tk = ticks(W);
    tk.list.forEach(function (t) {
      var x = X(t).toFixed(1);
      out.push('<line x1="' + x + '" y1="' + (AXIS - 4) + '" x2="' + x + '" y2="' + H + '" stroke="#eaeef2"/>');
      out.push('<text class="tick" x="' + x + '" y="' + (AXIS - 8) + '" text-anchor="middle">' + tickLabel(t, tk.step) + "</text>");
    });
    // Partitions and cuts: each group of lanes tinted its own way.
    D.bands.forEach(function (b, i) {
      if (!vis(b[0], b[1])) return;
      var bx0 = Math.max(x0, X(b[0])), bx1 = Math.min(x1, X(b[1]));
      var tints = b[4] ? ["rgba(207,34,46,.10)", "rgba(130,80,223,.16)"] : ["rgba(130,80,223,.16)", "rgba(9,105,218,.10)", "rgba(191,135,0,.14)", "rgba(26,127,55,.12)"];
      b[3].forEach(function (g, gi) {
        g.forEach(function (ln) {
          out.push('<rect class="hover" data-b="' + i + '" x="' + bx0.toFixed(1) + '" y="' + (TOP + ln * LANE + 1) + '" width="' + Math.max(1, bx1 - bx0).toFixed(1) + '" height="' + (LANE - 2) + '" fill="' + tints[gi % tints.length] + '"/>');
        });
      });
      out.push('<line x1="' + X(b[0]).toFixed(1) + '" y1="' + TOP + '" x2="' + X(b[0]).toFixed(1) + '" y2="' + H + '" stroke="#8250df" stroke-dasharray="4 3"/>');
      if (b[1] < D.t1) out.push('<line x1="' + X(b[1]).toFixed(1) + '" y1="' + TOP + '" x2="' + X(b[1]).toFixed(1) + '" y2="' + H + '" stroke="#8250df" stroke-dasharray="1 3"/>');
      out.push('<text class="band-label" x="' + (bx0 + 3).toFixed(1) + '" y="' + (TOP + 10 + (i % 3) * 11) + '">' + esc(b[2]) + "</text>");
    });
    // Network bursts.
    D.bursts.forEach(function (b, i) {
      if (!vis(b[0], b[1])) return;
      var bx0 = Math.max(x0, X(b[0])), bx1 = Math.min(x1, X(b[1]));
      out.push('<rect class="hover" data-u="' + i + '" x="' + bx0.toFixed(1) + '" y="' + (AXIS + 2) + '" width="' + Math.max(2, bx1 - bx0).toFixed(1) + '" height="' + (BURST - 3) + '" rx="2" fill="#f4a261" fill-opacity=".8"/>');
    });
    // Crashed, paused and not-started spans.
    D.spans.forEach(function (s, i) {
      if (!vis(s[1], s[2])) return;
      var sx0 = Math.max(x0, X(s[1])), sx1 = Math.min(x1, X(s[2]));
      var fill = s[3] === 0 ? "url(#hatch)" : s[3] === 1 ? "#ffe8a3" : "#eef0f2";
      out.push('<rect class="hover" data-s="' + i + '" x="' + sx0.toFixed(1) + '" y="' + (TOP + s[0] * LANE + 8) + '" width="' + Math.max(1, sx1 - sx0).toFixed(1) + '" height="' + (LANE - 16) + '" fill="' + fill + '" fill-opacity="' + (s[3] === 0 ? ".85" : "1") + '"/>');
    });
    // Lane axes.
    for (l = 0; l < D.lanes.length; l++) {
      out.push('<line x1="' + x0 + '" y1="' + laneY(l) + '" x2="' + x1 + '" y2="' + laneY(l) + '" stroke="#c5ccd3"/>');
    }

    // Messages.
    var msgs = [];
    if (show.msg) {
      for (var i = 0; i < D.msgs.length; i++) {
        var m = D.msgs[i];
        if (vis(m[2], m[3])) msgs.push(i);
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
    var isHiMsg = function (m) { return hiSeq[m[6]] || hiSeq[m[7]]; };
    drawn.arrows = msgs.length;
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
      msgs.forEach(function (i) {
        var m = D.msgs[i], p = endPoint(m), hi = isHiMsg(m);
        var stroke = hi ? "#cf222e" : m[4] === 1 ? "#cf222e" : m[5] ? "#8250df" : m[4] === 2 ? "#8c959f" : "#0969da";
        var dash = m[5] ? ' stroke-dasharray="5 3"' : m[4] === 2 ? ' stroke-dasharray="2 3"' : "";
        var marker = m[4] === 0 ? (hi ? ' marker-end="url(#ahh)"' : m[5] ? ' marker-end="url(#ahd)"' : ' marker-end="url(#ah)"') : "";
        out.push('<g class="hover" data-m="' + i + '"><line x1="' + p[0].toFixed(1) + '" y1="' + p[1] + '" x2="' + p[2].toFixed(1) + '" y2="' + p[3].toFixed(1) + '" stroke="transparent" stroke-width="9"/>' +
          '<line x1="' + p[0].toFixed(1) + '" y1="' + p[1] + '" x2="' + p[2].toFixed(1) + '" y2="' + p[3].toFixed(1) + '" stroke="' + stroke + '" stroke-width="' + (hi ? 2.5 : 1.3) + '"' + dash + marker + "/>");
        if (m[4] === 1) {
          var cx = p[2], cy = p[3];
          out.push('<path d="M' + (cx - 4).toFixed(1) + "," + (cy - 4).toFixed(1) + "l8,8m0,-8l-8,8" + '" stroke="#cf222e" stroke-width="2.2"/>');
        }
        out.push('<circle cx="' + p[0].toFixed(1) + '" cy="' + p[1] + '" r="2" fill="' + stroke + '"/></g>');
      });
    }

    // Marks.
    var marks = [];
    for (i = 0; i < D.marks.length; i++) {
      var mk = D.marks[i];
      if (mk[1] < v0 || mk[1] > v1) continue;
      if (mk[4] === 3 && !show.kernel) continue;
      if (mk[4] === 4 && (!show.note || !kindShow[D.kinds[mk[3]]])) continue;
      marks.push(i);
    }
    drawn.marks = marks.length;
    function markShape(mk, i) {
      var x = X(mk[1]), y = laneY(mk[0]), attrs = ' class="hover" data-k="' + i + '"';
      switch (mk[4]) {
        case 0: return '<path' + attrs + ' d="M' + x.toFixed(1) + "," + (y - 9) + "l6,9l-6,9z" + '" fill="#1a7f37"/>';
        case 1: return '<path' + attrs + ' d="M' + (x - 6).toFixed(1) + "," + (y - 6) + "l12,12m0,-12l-12,12" + '" stroke="#1f2328" stroke-width="3"/>' ;
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

    // The violation.
    drawn.hi = 0;
    D.hi.forEach(function (h, i) {
      if (h[1] < v0 || h[1] > v1) return;
      drawn.hi++;
      var x = X(h[1]).toFixed(1), y = laneY(h[2]);
      out.push('<line x1="' + x + '" y1="' + TOP + '" x2="' + x + '" y2="' + H + '" stroke="#cf222e" stroke-width="1.2" stroke-dasharray="6 3"/>');
      out.push('<g class="hover" data-h="' + i + '"><circle cx="' + x + '" cy="' + y + '" r="10" fill="rgba(207,34,46,.18)" stroke="#cf222e" stroke-width="2"/>' +
        '<text x="' + (+x + 12) + '" y="' + (y - 8) + '" font-size="11" font-weight="700" fill="#cf222e" stroke="#fff" stroke-width="3" paint-order="stroke">#' + h[0] + "</text></g>");
    });
    out.push("</g>");

    // Lane labels on top, in a fixed column.
    out.push('<rect x="0" y="0" width="' + (LABEL - 4) + '" height="' + H + '" fill="#f6f8fa"/>');
    out.push('<line x1="' + (LABEL - 4) + '" y1="0" x2="' + (LABEL - 4) + '" y2="' + H + '" stroke="#d0d7de"/>');
    if (BURST) out.push('<text class="tick" x="8" y="' + (AXIS + BURST - 2) + '">bursts</text>');
    for (l = 0; l < D.lanes.length; l++) {
      var name = D.lanes[l];
      if (name.length > 15) name = name.slice(0, 14) + "…";
      out.push('<text class="lane-label" x="8" y="' + (laneY(l) + 4) + '"><title>' + esc(D.lanes[l]) + "</title>" + esc(name) + "</text>");
    }
    out.push("</svg>");
    chart.innerHTML = out.join("");
    rangeEl.textContent = fmt(v0) + " – " + fmt(v1) + "  (" + fmt(v1 - v0) + " of " + fmt(D.t1 - D.t0) + ")";
    var full = Math.max(1, D.t1 - D.t0);
    viewport.style.left = (100 * (v0 - D.t0) / full) + "%";
    viewport.style.width = Math.max(0.3, 100 * (v1 - v0) / full) + "%";
    document.body.setAttribute("data-rendered", "lanes=" + D.lanes.length + " arrows=" + drawn.arrows + " marks=" + drawn.marks + " violation=" + drawn.hi + " spans=" + D.spans.length + " bands=" + D.bands.length);
  }

  // What an element of the chart says about itself.
  function describe(el) {
    var a;
    if ((a = el.getAttribute("data-m")) !== null) {
      var m = D.msgs[+a], s = m[8] + "\n" + D.lanes[m[0]] + " → " + D.lanes[m[1]] + (m[5] ? "  (duplicate)" : "");
      s += "\nsent " + fmt(m[2]) + " (event #" + m[6] + ")";
      if (m[4] === 0) s += "\ndelivered " + fmt(m[3]) + " (event #" + m[7] + "), after " + ((m[3] - m[2]) / 1e6).toFixed(3) + " ms";
      if (m[4] === 1) s += "\nDROPPED at " + fmt(m[3]) + " (event #" + m[7] + "): " + m[9];
      if (m[4] === 2) s += "\nstill in flight when the trace ended";
      return s;
    }
    if ((a = el.getAttribute("data-k")) !== null) {
      var k = D.marks[+a];
      return "#" + k[2] + " " + fmt(k[1]) + " " + D.lanes[k[0]] + " " + k[5];
    }
    if ((a = el.getAttribute("data-s")) !== null) {
      var sp = D.spans[+a];
      return D.lanes[sp[0]] + " " + sp[4] + " from " + fmt(sp[1]) + " to " + (sp[2] >= D.t1 ? "the end" : fmt(sp[2]));
    }
    if ((a = el.getAttribute("data-b")) !== null) {
      var b = D.bands[+a];
      return b[2] + " from " + fmt(b[0]) + " to " + (b[1] >= D.t1 ? "the end" : fmt(b[1]));
    }
    if ((a = el.getAttribute("data-u")) !== null) {
      var u = D.bursts[+a];
      return u[2] + " from " + fmt(u[0]) + " to " + fmt(u[1]);
    }
    if ((a = el.getAttribute("data-h")) !== null) {
      return "VIOLATING EVENT\n" + D.hi[+a][4];
    }
    return null;
  }
  function target(e) {
    var el = e.target;
    while (el && el !== chart) {
      if (el.getAttribute && el.getAttribute("class") === "hover") return el;
      el = el.parentNode;
    }
    return null;
  }
  var tip = document.createElement("div");
  tip.className = "tip";
  document.body.appendChild(tip);
  chart.addEventListener("mousemove", function (e) {
    if (drag) return;
    var el = target(e), s = el && describe(el);
    if (!s) { tip.style.display = "none"; return; }
    tip.textContent = s;
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
    var x = Math.max(LABEL, Math.min(W - RIGHT, clientX - r.left));
    return v0 + (x - LABEL) / (W - RIGHT - LABEL) * (v1 - v0);
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
    var per = (drag.v1 - drag.v0) / (width() - RIGHT - LABEL);
    v0 = drag.v0 - dx * per;
    v1 = drag.v1 - dx * per;
    render();
  });
  window.addEventListener("mouseup", function (e) {
    if (!drag) return;
    var moved = drag.moved;
    drag = null;
    chart.classList.remove("dragging");
    if (!moved) {
      var el = target(e), s = el && describe(el);
      if (s) details.textContent = s;
    }
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
      }
      render();
    });
  });

  // Overview: where the trouble is in the whole run.
  (function () {
    var full = Math.max(1, D.t1 - D.t0), html = [];
    D.spans.forEach(function (s) {
      if (s[3] > 1) return;
      html.push('<div class="ov" style="left:' + (100 * (s[1] - D.t0) / full) + "%;width:" + Math.max(0.2, 100 * (s[2] - s[1]) / full) + "%;background:" + (s[3] === 0 ? "#9aa0a6" : "#f2cc60") + ';opacity:.5"></div>');
    });
    D.bands.forEach(function (b) {
      html.push('<div class="ov" style="left:' + (100 * (b[0] - D.t0) / full) + "%;width:" + Math.max(0.2, 100 * (b[1] - b[0]) / full) + '%;background:rgba(130,80,223,.3)"></div>');
    });
    D.hi.forEach(function (h) {
      html.push('<div class="ov" style="left:' + (100 * (h[1] - D.t0) / full) + '%;width:2px;background:#cf222e"></div>');
    });
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
  })();

  // Links to events (violation list, context table) move the timeline there.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a.seq");
    if (!a) return;
    var t = +a.getAttribute("data-t"), span = Math.min(v1 - v0, Math.max(2e9, (D.t1 - D.t0) / 20));
    v0 = t - span / 2; v1 = t + span / 2;
    render();
    details.textContent = a.textContent;
  });

  var copy = document.getElementById("copy-replay");
  if (copy) {
    copy.addEventListener("click", function () {
      var text = document.getElementById("replay").textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(text).catch(function () {});
      copy.textContent = "copied";
    });
  }

  var lastW = 0;
  window.addEventListener("resize", function () { if (width() !== lastW) { lastW = width(); render(); } });
  render();
  lastW = width();

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
    var seq = document.querySelector("a.seq");
    if (seq) seq.click();
    v0 = D.t0; v1 = D.t1;
    render();
    ["data-m", "data-k", "data-s", "data-b", "data-u", "data-h"].forEach(function (a) {
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
