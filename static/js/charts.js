/* JAXBench leaderboard: draws the Plotly figures embedded as JSON (json_script) and keeps a
 * submission's progress bar live while its evaluation is in flight. No dependencies beyond the
 * plotly.js the portal serves itself (static/vendor/plotly.min.js). */
(function () {
  "use strict";

  var NARROW = 600;  // px of chart: below it a legend moves under the plot and row labels are cut shorter
  var NARROW_LABEL = 18;  // characters of a row label on the narrowest chart (the hover keeps it whole)

  function cut(text, limit) {
    text = String(text);
    return text.length <= limit ? text : text.slice(0, limit - 1) + "\u2026";
  }

  // The lines a horizontal legend of these names takes in ``width`` px (a symbol and a gap each).
  function legendLines(names, width) {
    var lines = 1, used = 0;
    names.forEach(function (name) {
      var w = 46 + 7 * String(name).length;
      if (used && used + w > width) { lines += 1; used = 0; }
      used += w;
    });
    return lines;
  }

  // The figure fitted to a narrow chart (a phone): the legend beside the plot goes under it (the
  // chart grows by its lines) and long row labels are cut, so that the plot keeps its width. The
  // figure's height, computed from its rows in leaderboard/charts.py, is kept otherwise.
  function fitted(el, fig, width) {
    var layout = titleAbove(el, Object.assign({autosize: true}, fig.layout || {}), width);
    if (!width || width >= NARROW) { return layout; }
    var chars = Math.max(NARROW_LABEL, Math.floor(width * 0.4 / 7));
    var legend = layout.legend || {};
    if (layout.showlegend !== false && legend.orientation === "v" && legend.x >= 1) {
      var names = (fig.data || []).filter(function (t) { return t.showlegend !== false && t.name; })
        .map(function (t) { return t.name; });
      var extra = 20 * legendLines(names, width - 20) + 16;  // a guess: settled once drawn (settleLegend)
      var margin = Object.assign({}, layout.margin || {});
      layout._below = {b: margin.b || 60, height: layout.height || 400};
      margin.b = layout._below.b + extra;
      margin.r = 20;
      layout.margin = margin;
      layout.height = layout._below.height + extra;
      layout.legend = Object.assign({}, legend, {orientation: "h", x: 0, xanchor: "left", xref: "container",
        y: 0, yanchor: "bottom", yref: "container"});
    }
    (fig.data || []).forEach(function (t) {
      if (t.orientation === "h" && Array.isArray(t.y) && !(layout.yaxis && layout.yaxis.ticktext)) {
        layout.yaxis = Object.assign({}, layout.yaxis || {}, {tickmode: "array", tickvals: t.y,
          ticktext: t.y.map(function (y) { return cut(y, chars); })});
      }
    });
    if (layout.xaxis && layout.xaxis.tickangle !== undefined && layout.xaxis.tickangle !== -90) {
      layout.xaxis = Object.assign({}, layout.xaxis, {tickangle: -90});  // slanted names would overlap
    }
    if (layout.yaxis && Array.isArray(layout.yaxis.ticktext)) {
      layout.yaxis = Object.assign({}, layout.yaxis, {
        ticktext: layout.yaxis.ticktext.map(function (y) { return cut(y, chars); })});
    }
    return layout;
  }

  // Break a long text into lines of at most ``chars`` characters (at spaces) with <br>.
  function wrap(text, chars) {
    var lines = [], line = "";
    String(text).split(" ").forEach(function (word) {
      if (line && (line + " " + word).length > chars) { lines.push(line); line = word; } else { line = line ? line + " " + word : word; }
    });
    if (line) { lines.push(line); }
    return lines;
  }

  // On a narrow chart the title and its subtitle go above it as text, which wraps (Plotly
  // never wraps a title, and misplaces one broken into lines); the top margin keeps room for the
  // labels of reference lines only. The x axis's title is broken into lines.
  function titleAbove(el, layout, width) {
    var title = layout.title;
    if (title && title.text) {
      var head = document.createElement("div");
      head.className = "chart-head";
      var t = document.createElement("p");
      t.className = "chart-title";
      t.textContent = title.text;
      head.appendChild(t);
      if (title.subtitle && title.subtitle.text) {
        var st = document.createElement("p");
        st.className = "chart-subtitle";
        st.textContent = title.subtitle.text;
        head.appendChild(st);
      }
      el.parentNode.insertBefore(head, el);
      var notes = (layout.annotations || []).some(function (a) { return a.yref === "paper" && a.y >= 1; });
      var margin = Object.assign({}, layout.margin || {});
      var top = notes ? 26 : 12;
      var saved = (margin.t || 50) - top;
      margin.t = top;
      layout.margin = margin;
      layout.height = (layout.height || 400) - saved;
      if (layout._below) { layout._below.height -= saved; }
      layout.title = {text: ""};
    }
    var axis = layout.xaxis;
    if (axis && axis.title && axis.title.text && axis.visible !== false) {
      layout.xaxis = Object.assign({}, axis, {automargin: true,
        title: Object.assign({}, axis.title, {text: wrap(axis.title.text, Math.floor(width * 0.5 / 7)).join("<br>")})});
    }
    return layout;
  }

  // Once drawn, the legend moved under a narrow chart gets the room it really takes.
  function settleLegend(el, layout) {
    var below = layout._below;
    var legend = el._fullLayout && el._fullLayout.legend;
    if (!below || !legend || !legend._height) { return; }
    var need = Math.ceil(legend._height) + 16;
    if (Math.abs(need - (layout.margin.b - below.b)) > 4) {
      window.Plotly.relayout(el, {"margin.b": below.b + need, height: below.height + need});
    }
  }

  function drawFigures() {
    if (typeof window.Plotly === "undefined") { return; }
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var src = document.getElementById(el.getAttribute("data-figure"));
      if (!src || el.getAttribute("data-drawn")) { return; }
      var fig = JSON.parse(src.textContent);
      var layout = fitted(el, fig, el.clientWidth);
      window.Plotly.newPlot(el, fig.data || [], layout, {responsive: true, displaylogo: false});
      settleLegend(el, layout);
      el.style.minHeight = "";  // the room kept for the chart before it was drawn
      el.setAttribute("data-drawn", "1");
    });
  }

  function setText(id, text) { var el = document.getElementById(id); if (el) { el.textContent = text; } }

  function badge(cls, text) {
    var span = document.createElement("span");
    span.className = "badge " + cls;
    span.textContent = text;
    return span;
  }

  function updateProgress(box, p) {
    var bar = document.getElementById("progress-bar");
    if (bar) { bar.max = Math.max(p.total, 1); bar.value = p.done; bar.textContent = p.percent + "%"; }
    setText("progress-text", p.done + " / " + p.total + " evaluated (" + p.percent + "%)");
    setText("progress-state", p.finished ? "· finished" : "· in progress");
    var waiting = document.getElementById("progress-waiting");
    if (waiting) {
      waiting.hidden = !p.waiting_for;
      if (p.waiting_for) { waiting.textContent = "waiting for a " + p.waiting_for + " worker"; }
    }
    var stages = document.getElementById("progress-stages");
    if (stages && p.stages) {
      stages.textContent = "";
      Object.keys(p.stages).forEach(function (stage) {
        var label = document.createElement("span");
        label.className = "muted";
        label.textContent = stage + ": ";
        stages.appendChild(label);
        Object.keys(p.stages[stage]).forEach(function (st) {
          stages.appendChild(badge("", st + " " + p.stages[stage][st]));
          stages.appendChild(document.createTextNode(" "));
        });
        stages.appendChild(document.createElement("br"));
      });
    }
    var outcomes = document.getElementById("progress-outcomes");
    if (outcomes && p.outcomes) {
      outcomes.textContent = "";
      Object.keys(p.outcomes).forEach(function (o) {
        outcomes.appendChild(badge(o, o + " " + p.outcomes[o]));
        outcomes.appendChild(document.createTextNode(" "));
      });
    }
    var queueBox = document.getElementById("progress-queue");
    if (queueBox) {
      queueBox.hidden = !p.queue;
      if (p.queue) {
        setText("queue-text", p.queue.text);
        var list = document.getElementById("queue-running");
        if (list) {
          list.textContent = "";
          (p.queue.running.length ? p.queue.running : [{text: "nothing"}]).forEach(function (r) {
            var li = document.createElement("li");
            li.textContent = r.text;
            list.appendChild(li);
          });
        }
      }
    }
    var saved = p.precheck_saved || {};
    var savedBox = document.getElementById("progress-saved");
    if (savedBox && saved.candidates) {
      savedBox.hidden = false;
      setText("saved-candidates", String(saved.candidates));
    }
    if (p.finished) {
      box.setAttribute("data-finished", "1");
      var done = document.getElementById("progress-done");
      if (done) { done.hidden = false; }
    }
  }

  function pollProgress() {
    var box = document.querySelector("[data-progress-url]");
    if (!box || box.getAttribute("data-finished") === "1" || !window.fetch) { return; }
    var url = box.getAttribute("data-progress-url");
    var delay = 2000;
    function tick() {
      fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.json(); })
        .then(function (p) {
          updateProgress(box, p);
          if (!p.finished) { setTimeout(tick, delay); }
        })
        .catch(function () { delay = Math.min(delay * 2, 30000); setTimeout(tick, delay); });
    }
    setTimeout(tick, delay);
  }

  function start() { drawFigures(); pollProgress(); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
