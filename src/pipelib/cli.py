"""Command line: ``pipelib nfdp`` (NFDP guarantee, or the largest k for a target) and
``pipelib check-config`` (validate config files the way the workflow does)."""

from __future__ import annotations

import argparse
import sys

from . import privacy


def _nfdp(args) -> int:
    samplings = [args.sampling] if args.sampling else list(privacy.SAMPLINGS)
    if args.k is not None:
        print("sampling,n,k,epsilon,delta,epsilon_log10,delta_vacuous")
        for s in samplings:
            r = privacy.nfdp_ledger_row(0, args.n, args.k, s)
            print(f"{s},{args.n},{args.k},{r['epsilon']:.6g},{r['delta']:.6g},{r['epsilon_log10']:.6g},{r['delta_vacuous']}")
    else:
        print("sampling,n,target_epsilon,target_delta,max_k,epsilon,delta")
        for s in samplings:
            k = privacy.max_k(args.n, args.epsilon, args.delta, s)
            g = privacy.nfdp(args.n, k, s)
            print(f"{s},{args.n},{args.epsilon},{args.delta},{k},{g.epsilon:.6g},{g.delta:.6g}")
    return 0


def _check_config(args) -> int:
    from .config import load, validate

    validate(load(*args.files))
    print(f"ok: {' + '.join(args.files)}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="pipelib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("nfdp", help="NFDP (epsilon, delta) of a k-subsample, or the largest k for a target")
    p.add_argument("--n", type=int, required=True, help="the party's private set size")
    p.add_argument("--k", type=int, help="subsample size: print its (epsilon, delta)")
    p.add_argument("--epsilon", type=float, help="target epsilon: print the largest k that meets it")
    p.add_argument("--delta", type=float, help="target delta (with --epsilon)")
    p.add_argument("--sampling", choices=privacy.SAMPLINGS, help="default: both")
    p.set_defaults(func=_nfdp)
    c = sub.add_parser("check-config", help="validate config files (later ones override earlier ones)")
    c.add_argument("files", nargs="+")
    c.set_defaults(func=_check_config)
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
