/* JAXBench leaderboard: draws the Plotly figures embedded as JSON (json_script) and keeps a
 * submission's progress bar live while its evaluation is in flight. No dependencies beyond the
 * plotly.js the portal serves itself (static/vendor/plotly.min.js). */
(function () {
  "use strict";

  function drawFigures() {
    if (typeof window.Plotly === "undefined") { return; }
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var src = document.getElementById(el.getAttribute("data-figure"));
      if (!src || el.getAttribute("data-drawn")) { return; }
      var fig = JSON.parse(src.textContent);
      var layout = Object.assign({autosize: true}, fig.layout || {});
      window.Plotly.newPlot(el, fig.data || [], layout, {responsive: true, displaylogo: false});
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
