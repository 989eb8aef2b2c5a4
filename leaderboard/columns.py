"""The leaderboard's columns, defined once: their order, header, sort key, whether the column
picker may hide them (and hides them by default), and the definition that is both the
header's tooltip and its entry under "Leaderboard columns" on /docs/ (``#col-<key>``).

The first four columns after the sticky first one are the ranking number with its interval,
solved and fast@N: at 1280 px they are on screen without scrolling; the others follow, and
the picker (static/js/board.js) shows or hides them."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Column:
    key: str
    label: str
    definition: str
    sort: str | None = None
    optional: bool = True
    hidden: bool = False  # hidden by default (the picker shows it)
    num: bool = True

    @property
    def anchor(self) -> str:
        return f"col-{self.key}"

    @property
    def docs_url(self) -> str:
        return f"/docs/#{self.anchor}"


COLUMNS: tuple[Column, ...] = (
    Column(
        "rank",
        "Rank · submission",
        "Position by floored geomean (then the unfloored geomean, then solved); rows marked ≈ are tied: "
        "their geomean intervals overlap, and they share a rank. Tick a row's box to compare it with others.",
        sort="geomean",
        optional=False,
        num=False,
    ),
    Column(
        "geomean",
        "Floored geomean",
        "The ranking number: the geometric mean over the workload set of each workload's best speedup "
        "among the first N samples, floored at 1x (a wrong, failed or slower kernel counts 1.0x), with "
        "its 95% interval.",
        sort="geomean",
        optional=False,
    ),
    Column(
        "solved",
        "Solved",
        "Workloads of the set with at least one correct sample among the first N.",
        sort="solved",
        optional=False,
    ),
    Column(
        "fast",
        "fast@N",
        "fast_p@N: the share of workloads with a correct sample among the first N whose speedup interval "
        "lies above p (p = 1 unless chosen); a tie is solved, never fast.",
        sort="fast",
        optional=False,
    ),
    Column(
        "upstream",
        "Upstream score",
        "The public suite's own agent score, beside ours: the geometric mean over the workloads ATTEMPTED "
        "(at least one kernel evaluated) of each one's best speedup, floored at 1x, at the full budget. It "
        "never falls below the floored geomean, which divides by every workload of the set: leaving a "
        "workload out costs nothing here and 1.0x there.",
        sort="upstream",
    ),
    Column(
        "ugeomean",
        "Unfloored geomean",
        "The geometric mean of the raw best speedups (not floored at 1, below 1 when slower than XLA) over "
        "the solved workloads, with its interval; it orders equal floored geomeans.",
        sort="ugeomean",
    ),
    Column(
        "expert",
        "% of expert",
        "The floored geomean over the expert set as a share of the hand-tuned expert kernels' floored "
        "geomean on the same set (the study's \u201c77% of expert\u201d).",
        sort="expert",
    ),
    Column(
        "correctness",
        "Per-sample correct",
        "Correct samples over all samples of the submission (every workload, every sample).",
        sort="correctness",
    ),
    Column(
        "model", "Model", "The model that wrote the kernels, as the submitter declared it.", sort="model", num=False
    ),
    Column(
        "tokens",
        "Tokens / solved",
        "Tokens the trace reports (in + out) over the workloads solved.",
        sort="tokens",
        hidden=True,
    ),
    Column("cost", "Cost / solved", "Cost the trace reports over the workloads solved.", sort="cost", hidden=True),
    Column(
        "fast_per_dollar",
        "fast@N per $",
        "fast@N over the cost the trace reports (self-reported cost, measured fast@N).",
        sort="fast_per_dollar",
        hidden=True,
    ),
    Column("date", "Date", "When the submission was published.", sort="date", num=False),
    Column(
        "provenance",
        "Provenance",
        "\u201cverified here\u201d: every number of the row was measured by this portal's harness; "
        "self-reported numbers are never ranked.",
        num=False,
        hidden=True,
    ),
    Column("jax", "JAX", "The JAX versions the row's samples were evaluated with.", num=False, hidden=True),
    Column("harness", "Harness", "The harness versions the row's samples were evaluated with.", num=False, hidden=True),
)
