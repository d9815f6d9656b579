"""Command line: ``pipelib nfdp`` (NFDP guarantee, or the largest k for a target), ``pipelib check-config``
(validate config files the way the workflow does), ``pipelib verify`` (check every output under a results
folder), ``pipelib sync-readme`` (copy the generated headline tables into README.md), ``pipelib timings`` (wall
time per stage of a run, from its benchmark files)."""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .privacy import nfdp
from .vocab import SAMPLINGS


def _nfdp(args) -> int:
    samplings = [args.sampling] if args.sampling else list(SAMPLINGS)
    if args.k is not None:
        print("sampling,n,k,epsilon,delta,epsilon_log10,delta_vacuous")
        for s in samplings:
            g, r = nfdp.nfdp(args.n, args.k, s), nfdp.ledger_extras(args.n, args.k, s)
            print(
                f"{s},{args.n},{args.k},{g.epsilon:.6g},{g.delta:.6g},{r['epsilon_log10_paper_convention']:.6g},{r['delta_vacuous']}"
            )
    else:
        print("sampling,n,target_epsilon,target_delta,max_k,epsilon,delta")
        for s in samplings:
            k = nfdp.max_k(args.n, args.epsilon, args.delta, s)
            g = nfdp.nfdp(args.n, k, s)
            print(f"{s},{args.n},{args.epsilon},{args.delta},{k},{g.epsilon:.6g},{g.delta:.6g}")
    return 0


def _check_config(args) -> int:
    """Validate config files as the workflow would: a preset alone is merged over config.yaml."""
    from pathlib import Path

    from .config import load, scenarios, validate
    from .plan import check_sizes

    files = list(args.files)
    if Path(files[0]).name != "config.yaml" and Path("config.yaml").is_file():
        files.insert(0, "config.yaml")
    config = validate(load(*files))
    check_sizes({**config, "scenarios": scenarios(config)}, config["results_dir"])
    print(f"ok: {' + '.join(files)}")
    return 0


def _verify(args) -> int:
    from .verify import report

    text, status = report(args.results_dir)
    print(text)
    return status


def _sync_readme(args) -> int:
    from .report.pages import sync_readme

    changed = sync_readme(args.readme, args.pages)
    print(f"{args.readme}: " + (f"updated {', '.join(changed)} from {args.pages}" if changed else "already up to date"))
    return 0


def _timings(args) -> int:
    from .report.timings import markdown

    print(markdown(args.results_dir, args.rules, args.since))
    return 0


def _moment(text: str) -> float:
    """An ISO 8601 date and time (``2026-11-30T09:15``, local time unless it names its zone) -> epoch seconds."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date and time: {text!r} (e.g. 2026-11-30T09:15)") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="pipelib", description=__doc__)
    parser.add_argument("--version", action="version", version=f"pipelib {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("nfdp", help="NFDP (epsilon, delta) of a k-subsample, or the largest k for a target")
    p.add_argument("--n", type=int, required=True, help="the party's private set size")
    p.add_argument("--k", type=int, help="subsample size: print its (epsilon, delta)")
    p.add_argument("--epsilon", type=float, help="target epsilon: print the largest k that meets it")
    p.add_argument("--delta", type=float, help="target delta (with --epsilon)")
    p.add_argument("--sampling", choices=SAMPLINGS, help="default: both")
    p.set_defaults(func=_nfdp)
    c = sub.add_parser("check-config", help="validate config files (later ones override earlier ones)")
    c.add_argument("files", nargs="+")
    c.set_defaults(func=_check_config)
    v = sub.add_parser("verify", help="check every output under a results folder; print how to rebuild what is broken")
    v.add_argument("results_dir", nargs="?", default="results", help="the folder (default: results)")
    v.set_defaults(func=_verify)
    r = sub.add_parser("sync-readme", help="copy the generated headline pages into README.md's headline blocks")
    r.add_argument("--pages", default="docs/reproduction/reduced", help="the folder of the generated pages")
    r.add_argument("--readme", default="README.md")
    r.set_defaults(func=_sync_readme)
    t = sub.add_parser("timings", help="wall time per stage of a run, from its per-job benchmark files (Markdown)")
    t.add_argument("results_dir", nargs="?", default="results", help="the folder (default: results)")
    t.add_argument("--rules", nargs="*", help="only these rules")
    t.add_argument("--since", type=_moment, help="only jobs started at or after this time (ISO 8601: a run's own jobs)")
    t.set_defaults(func=_timings)
    args = parser.parse_args(argv)
    if args.command == "nfdp" and (args.k is None) == (args.epsilon is None or args.delta is None):
        parser.error("nfdp needs either --k, or both --epsilon and --delta")
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"pipelib {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
