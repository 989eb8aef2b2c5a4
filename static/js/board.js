/* JAXBench leaderboard table: the column picker (which optional columns show, kept in
 * localStorage) and compare-by-ticking (2 to 4 ticked rows open /compare/). No framework; the
 * table works without it (every column shows, the compare form still submits). */
(function () {
  "use strict";
  var KEY = "jaxbench.board.columns";

  function load() {
    try { return JSON.parse(window.localStorage.getItem(KEY) || "null"); } catch (e) { return null; }
  }
  function save(hidden) {
    try { window.localStorage.setItem(KEY, JSON.stringify(hidden)); } catch (e) { /* private mode */ }
  }

  function apply(table, hidden) {
    Array.from(table.classList).forEach(function (c) {
      if (c.indexOf("hide-") === 0) { table.classList.remove(c); }
    });
    hidden.forEach(function (k) { table.classList.add("hide-" + k); });
    document.querySelectorAll("[data-col-toggle]").forEach(function (box) {
      box.checked = hidden.indexOf(box.getAttribute("data-col-toggle")) < 0;
    });
  }

  function columns(table) {
    var defaults = (table.getAttribute("data-hidden-default") || "").split(" ").filter(Boolean);
    var hidden = load();
    if (!Array.isArray(hidden)) { hidden = defaults; }
    apply(table, hidden);
    document.querySelectorAll("[data-col-toggle]").forEach(function (box) {
      box.addEventListener("change", function () {
        var k = box.getAttribute("data-col-toggle");
        hidden = hidden.filter(function (h) { return h !== k; });
        if (!box.checked) { hidden.push(k); }
        save(hidden);
        apply(table, hidden);
      });
    });
    var reset = document.getElementById("col-reset");
    if (reset) {
      reset.addEventListener("click", function () {
        hidden = defaults.slice();
        try { window.localStorage.removeItem(KEY); } catch (e) { /* ignore */ }
        apply(table, hidden);
      });
    }
  }

  function compare() {
    var button = document.getElementById("compare-ticked");
    var hint = document.getElementById("compare-hint");
    if (!button) { return; }
    function update() {
      var n = document.querySelectorAll("input.pick:checked").length;
      button.disabled = n < 2 || n > 4;
      if (hint) {
        hint.textContent = n === 0 ? "tick 2 to 4 rows" : n + " ticked" + (n > 4 ? " (at most 4)" : n < 2 ? " (at least 2)" : "");
      }
    }
    document.querySelectorAll("input.pick").forEach(function (box) { box.addEventListener("change", update); });
    update();
  }

  function start() {
    var table = document.getElementById("leaderboard");
    if (table) { columns(table); }
    compare();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
