/* Tables that read on a phone: every body cell of a table with a header row gets its column's
 * header as data-label, and the table the class "stackable"; below 700 px static/css/portal.css
 * then shows each row as a card whose cells are labelled by those headers (a column whose header
 * has data-stack-title, and a row's own <th>, give the card its title instead). Without this
 * script such a table scrolls inside itself: the page never scrolls sideways. */
(function () {
  "use strict";

  function headerText(th) {
    if (th.hasAttribute("data-label")) { return th.getAttribute("data-label"); }
    var copy = th.cloneNode(true);
    copy.querySelectorAll(".def, [aria-hidden=true]").forEach(function (el) { el.remove(); });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  function headerRow(table) {
    if (table.tHead && table.tHead.rows.length) { return table.tHead.rows[table.tHead.rows.length - 1]; }
    var first = table.rows[0];
    if (!first || table.rows.length < 2) { return null; }
    for (var i = 0; i < first.cells.length; i++) {
      if (first.cells[i].tagName !== "TH") { return null; }
    }
    first.classList.add("stack-head");
    return first;
  }

  function label(table) {
    if (table.classList.contains("no-stack") || table.classList.contains("kv")) { return; }
    var head = headerRow(table);
    if (!head || head.cells.length < 2) { return; }
    var labels = [], titles = [];
    Array.prototype.forEach.call(head.cells, function (th) {
      for (var k = 0; k < th.colSpan; k++) {
        labels.push(headerText(th));
        titles.push(th.hasAttribute("data-stack-title"));
      }
    });
    Array.prototype.forEach.call(table.rows, function (row) {
      if (row === head || row.parentNode === table.tHead) { return; }
      var col = 0;
      Array.prototype.forEach.call(row.cells, function (cell) {
        if (cell.tagName === "TD" && !cell.hasAttribute("data-label")) {
          var whole = cell.colSpan >= labels.length;
          cell.setAttribute("data-label", whole ? "" : (labels[col] || ""));
          if (titles[col] && !whole) { cell.classList.add("stack-title"); }
        }
        col += cell.colSpan;
      });
    });
    table.classList.add("stackable");
  }

  function start() { document.querySelectorAll("main table").forEach(label); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
