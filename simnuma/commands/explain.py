"""``simnuma explain``: one miss of each thread of a case, stage by stage, against the same thread on local memory."""
from __future__ import annotations

import json
import sys

from .run import add_changes_option, changed_board, traceable


def register(sub) -> None:
    p = sub.add_parser("explain", help="walk one miss of each thread through the board, stage by stage",
                       description="Run a case and say where one miss of each foreground thread spends its time"
                                   " (SRI, links, DRAM queue, DRAM, the way back, probes), against the same thread"
                                   " alone on its own node's memory, and which stage makes the difference.")
    p.add_argument("board", metavar="TOPO", help="bundled board name (e.g. quartet) or YAML file")
    p.add_argument("specs", nargs="+", metavar="CASE", help="the case, e.g. 0.0.w.1 1.0.w.0 + high@low")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--json", action="store_true", help="print the stage times as JSON")
    add_changes_option(p, "change one board parameter, as simnuma run --set does (repeatable), e.g."
                          " --set coherence=probe_filter")
    p.set_defaults(func=cmd_explain)


def cmd_explain(args) -> int:
    from ..case import parse_case
    from ..trace.explain import explain, explain_text
    from ..workload import Workload

    topo, changes = changed_board(args.board, args.changes)
    case = parse_case(args.specs).placed(topo)
    Workload.build(case.threads, case.background).check(topo)
    data = traceable(explain(topo, case.name, seed=args.seed), topo, changes)
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        print()
    else:
        print(explain_text(data), end="")
    return 0
