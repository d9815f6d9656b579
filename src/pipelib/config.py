"""Configuration: loading with errors that name the file, line and column; JSON-schema validation with
errors that name the key and the allowed values; the scenarios and rows a config selects to run."""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator
from snakemake.common import configfile as snake_config

from . import vocab
from .privacy import Adjacency, registry
from .runs import FedmdRun
from .settings import VARIANT

# Columns each dataset's ingested tables carry (what a task or scheme may refer to).
WRITER_DATASETS = {"femnist", "femnist_letters"}
LABEL_COLUMNS = {name: {"label"} for name in vocab.DATASETS} | {"cifar100": set(vocab.LABEL_COLUMNS)}


class ConfigError(ValueError):
    """The configuration is invalid; the message names each offending key."""


def _vocab(node):
    """Replace every ``{$vocab: NAME}`` in the schema by ``enum: pipelib.vocab.NAME``."""
    if isinstance(node, dict):
        if "$vocab" in node:
            rest = {k: _vocab(v) for k, v in node.items() if k != "$vocab"}
            return {"enum": list(getattr(vocab, node["$vocab"])), **rest}
        return {k: _vocab(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_vocab(v) for v in node]
    return node


# The workflow's config schema, where the Snakemake workflow catalog expects it (pipelib is installed
# editable from the workflow's checkout: pip install -e .).
SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def schema(path=None) -> dict:
    """The config's JSON schema (``path``, default :data:`SCHEMA`) with the vocabularies of
    :mod:`pipelib.vocab`.  The workflow passes its own (beside its Snakefile)."""
    path = Path(path) if path is not None else SCHEMA
    if not path.is_file():
        raise ConfigError(
            f"the config schema {path} is missing: pipelib reads it from the workflow checkout it was "
            f"installed from (pip install -e . in the repository root)"
        )
    return _vocab(safe_load(path.read_text()))


def safe_load(stream):
    """yaml.safe_load with libyaml's C parser where PyYAML has it (about 10x faster on the config, the schema
    and the claims; the same data and the same marked errors)."""
    return yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_yaml(path) -> dict:
    """One YAML config file; a syntax error names the file, line and column."""
    try:
        with open(path) as f:
            data = safe_load(f)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        raise ConfigError(f"{path}: YAML syntax error at {where}: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    except OSError as err:
        raise ConfigError(f"cannot read config file {path}: {err.strerror}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must map keys to values (found a {type(data).__name__})")
    return data


def load(*paths) -> dict:
    """Load YAML config files, later ones deep-merged over earlier ones (as Snakemake does)."""
    config: dict = {}
    for path in paths:
        _merge(config, read_yaml(path))
    return config


def explain_yaml_errors() -> None:
    """Make Snakemake's own config loading (``configfile:``, ``--configfile``) report a YAML syntax error
    with its file, line and column; Snakemake alone says only that the file is not valid YAML.
    The workflow profiles call this (their ``__definitions__`` run before any config file is read)."""

    if getattr(snake_config, "_pipelib_explains", False):
        return
    original = snake_config._load_configfile

    def load_configfile(path_or_obj, filetype="Config"):
        try:
            return original(path_or_obj, filetype)
        except Exception as err:
            if isinstance(path_or_obj, (str, bytes)) or hasattr(path_or_obj, "__fspath__"):
                try:
                    read_yaml(path_or_obj)
                except ConfigError as detail:
                    raise type(err)(str(detail)) from None
            raise

    snake_config._load_configfile = load_configfile
    snake_config._pipelib_explains = True


def _merge(base: dict, update: dict) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def _where(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def _describe(error) -> str:
    where = _where(error)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"unknown key {', '.join(map(repr, extra))} in {where}; allowed keys: {', '.join(allowed)}"
    if error.validator == "enum":
        allowed = ", ".join(map(str, error.validator_value))
        return f"config key {where} = {error.instance!r} is not allowed; allowed values: {allowed}"
    if error.validator == "type":
        return f"config key {where} = {error.instance!r} has the wrong type; expected {error.validator_value}"
    if error.validator == "propertyNames":
        return f"config key {where}: name {error.instance!r} must match {error.schema.get('pattern')}"
    return f"config key {where}: {error.message}"


def validate(config: dict, schema_path=None) -> dict:
    """Validate a merged config; raise ConfigError listing every problem found.

    Beyond the schema, checks references between sections: a scenario's task must exist and
    its columns must exist in the private dataset; writer-based rules need writer ids.
    """
    errors = sorted(
        Draft202012Validator(schema(schema_path)).iter_errors(config), key=lambda e: list(map(str, e.absolute_path))
    )
    problems = [_describe(e) for e in errors]
    if not problems:
        problems = _cross_check(config)
    if problems:
        raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))
    return config


def _cross_check_papers(config: dict) -> list[str]:
    """paper002 / paper003 name defined table2 labels, scenarios and encoders (entries whose label or
    scenario the run selection leaves out are skipped, not errors)."""
    problems, labels = [], config["table2"]
    p = config["paper002"]
    for key in ("table4.noniid", "table5.k"):
        section, field = key.split(".")
        for label, value in p[section][field].items():
            if label not in labels:
                problems.append(f"config key paper002.{key}.{label}: not a table2 dataset label ({', '.join(labels)})")
            if field == "noniid" and value not in config["scenarios"]:
                problems.append(f"config key paper002.{key}.{label} = {value!r} is not a scenario")
    q = config["paper003"]
    rows = [(f"figure2abc.{d}", v) for d, v in q["figure2abc"].items()]
    rows += [(f"figure2d.datasets.{d}", v) for d, v in q["figure2d"]["datasets"].items()]
    for key, v in rows:
        if v["scenario"] not in config["scenarios"]:
            problems.append(f"config key paper003.{key}.scenario = {v['scenario']!r} is not a scenario")
        if v["encoder"] not in config["rknn"]["encoders"]:
            problems.append(f"config key paper003.{key}.encoder = {v['encoder']!r} is not an rknn encoder")
    for d, v in q["figure2abc"].items():
        if max(v["k"]) > v["at_s"] or min(v["s"]) < 1:
            problems.append(f"config key paper003.figure2abc.{d}: k up to {max(v['k'])} needs at_s >= it")
    return problems


def _cross_check_ldpfl(config: dict) -> list[str]:
    """ldpfl names defined scenarios, ranges are finite with r > 0, and Figure 5(d)'s dataset is one of its datasets."""
    problems, d = [], config["ldpfl"]
    for label, v in d["datasets"].items():
        key = f"ldpfl.datasets.{label}"
        if v["scenario"] not in config["scenarios"]:
            problems.append(f"config key {key}.scenario = {v['scenario']!r} is not a scenario")
        c, r = v["fixed_range"]
        if not (math.isfinite(c) and math.isfinite(r) and r > 0):
            problems.append(
                f"config key {key}.fixed_range = {v['fixed_range']}: the centre c must be finite and the radius r "
                "finite and > 0 (Eq. 2 divides by r)"
            )
    bad = [r for r in d["radius"]["r"] if not (math.isfinite(r) and r > 0)]
    if bad:
        problems.append(f"config key ldpfl.radius.r = {d['radius']['r']}: every radius must be finite and > 0")
    if d["radius"]["dataset"] not in d["datasets"]:
        problems.append(
            f"config key ldpfl.radius.dataset = {d['radius']['dataset']!r} is not one of ldpfl.datasets "
            f"({', '.join(d['datasets'])})"
        )
    seen = set()
    for i, c in enumerate(d["compare"]):
        name, key = c["scenario"], f"ldpfl.compare.{i}"
        if name in seen:
            problems.append(f"config key {key}: scenario {name!r} has an earlier ldpfl.compare entry")
        seen.add(name)
        if name not in config["scenarios"]:
            problems.append(f"config key {key}: scenario {name!r} is not defined")
        if c["like"] not in d["datasets"]:
            problems.append(
                f"config key {key}.like = {c['like']!r} is not one of ldpfl.datasets ({', '.join(d['datasets'])})"
            )
        if name in [v["scenario"] for v in d["datasets"].values()]:
            problems.append(f"config key {key}: scenario {name!r} already has an ldpfl.datasets entry")
    return problems


def _cross_check_ldpdl(config: dict) -> list[str]:
    """ldpdl names defined scenarios (and Table 1's datasets its seeds), asks no more owners per query than a
    scenario has, and fits its queries in the public pool."""
    problems, d = [], config["ldpdl"]
    for part in ("table", "figures"):
        for label, name in d[part]["datasets"].items():
            key = f"ldpdl.{part}.datasets.{label}"
            sc = config["scenarios"].get(name)
            if sc is None:
                problems.append(f"config key {key} = {name!r} is not a scenario")
                continue
            default = sc["parties"] if d["owners"] == "parties" else d["owners"]["count"]
            owners = [default] + (d["figures"]["owners"] if part == "figures" else [])
            per_query = [d["per_query"]] + (d["figures"]["per_query"] if part == "figures" else [])
            if max(per_query) > default:
                problems.append(
                    f"config key {key}: N_Q up to {max(per_query)} owners per query, but scenario {name!r} "
                    + (f"has {default} parties (owners)" if d["owners"] == "parties" else f"has L = {default} owners")
                )
            if d["per_query"] > min(owners):
                problems.append(
                    f"config key {key}: ldpdl.per_query = {d['per_query']} owners per query, but "
                    f"ldpdl.figures.owners goes down to {min(owners)}"
                )
            problems += _ldpdl_pool_check(d, key, name, sc)
    for label in d["table"].get("seeds", {}):
        if label not in d["table"]["datasets"]:
            problems.append(
                f"config key ldpdl.table.seeds.{label}: no such dataset in ldpdl.table.datasets "
                f"({', '.join(d['table']['datasets'])})"
            )
    c = d["compare"]
    for i, name in enumerate(c["scenarios"]):
        sc = config["scenarios"].get(name)
        key = f"ldpdl.compare.scenarios.{i}"
        if sc is None:
            problems.append(f"config key {key}: scenario {name!r} is not defined")
            continue
        if c["per_query"] > sc["parties"]:
            problems.append(
                f"config key ldpdl.compare.per_query: {c['per_query']} owners per query, but scenario {name!r} "
                f"has {sc['parties']} parties (owners)"
            )
        problems += _ldpdl_pool_check(d, key, name, sc)
    for dataset, enc in d["teacher"]["by_dataset"].items():
        if enc["kind"] == "transfer" and enc["source"] == dataset:
            problems.append(
                f"config key ldpdl.teacher.by_dataset.{dataset}.source: the teachers' encoder of {dataset} must be "
                f"trained on another dataset than the owners' (got source {dataset!r})"
            )
    if d["teacher"]["encoder"]["kind"] != "hog":
        problems.append(
            "config key ldpdl.teacher.encoder: the default encoder must be HOG (a transfer encoder is "
            "set per private dataset, in ldpdl.teacher.by_dataset)"
        )
    return problems


def _cross_check_fedmd(config: dict) -> list[str]:
    """fedmd.compare names each defined scenario once, one with a public pool of at least one round's
    queries, and calibrates FedMD-LDP only to NFDP rows it runs."""
    problems, seen, per_round = [], set(), config["fedmd"]["public_per_round"]
    for i, c in enumerate(config["fedmd"]["compare"]):
        name, key = c["scenario"], f"fedmd.compare.{i}"
        if name in seen:
            problems.append(f"config key {key}: scenario {name!r} has an earlier fedmd.compare entry")
        seen.add(name)
        sc = config["scenarios"].get(name)
        if sc is None:
            problems.append(f"config key {key}: scenario {name!r} is not defined")
            continue
        rows = sc.get("public_rows", {})
        if "stop" in rows and rows["stop"] - rows.get("start", 0) < per_round:
            problems.append(
                f"config key {key}: scenario {name!r} has {rows['stop'] - rows.get('start', 0)} public "
                f"samples; FedMD asks fedmd.public_per_round = {per_round} public queries per round"
            )
        problems += _ldp_k_problems(config, key, c)
    return problems + _ablation_problems(config)


def _ablation_problems(config: dict) -> list[str]:
    """paper002.ablation: variants are named once and narrow their rows to the ablation's own k and table2
    datasets."""
    a, problems = config["paper002"]["ablation"], []
    labels = list(config["table2"])
    names = [v["name"] for v in a["variants"]]
    problems += [
        f"config key paper002.ablation.variants: {n!r} named twice" for n in sorted(set(names)) if names.count(n) > 1
    ]
    for i, v in enumerate(a["variants"]):
        key = f"config key paper002.ablation.variants.{i} ({v['name']})"
        if set(v.get("k", a["k"])) - set(a["k"]):
            problems.append(f"{key}.k: {sorted(set(v['k']) - set(a['k']))} not in paper002.ablation.k {a['k']}")
        if set(v.get("datasets", labels)) - set(labels):
            unknown = sorted(set(v["datasets"]) - set(labels))
            problems.append(f"{key}.datasets: {unknown} not among the table2 datasets ({', '.join(labels)})")
    return problems


def _ldp_k_problems(config: dict, key: str, spec: dict) -> list[str]:
    """FedMD-LDP rows (``ldp_k``) of a table2 or fedmd.compare entry calibrate to NFDP rows it runs, with
    bounded answers."""
    problems, missing = [], sorted(set(spec.get("ldp_k", [])) - set(spec["k"]))
    if missing:
        problems.append(f"config key {key}.ldp_k: {missing} are not in its k {spec['k']} (must also be NFDP rows)")
    if spec.get("ldp_k") and config["fedmd"]["answer"] == "logits":
        problems.append(
            f"config key {key}.ldp_k: FedMD-LDP needs bounded answers; set fedmd.answer to softmax or argmax "
            f"(it is logits)"
        )
    return problems


def _ldpdl_pool_check(d: dict, key: str, name: str, sc: dict) -> list[str]:
    """The public pool of an LDP-DL scenario holds every query of a run (S x iterations)."""
    need, rows = d["queries_per_iteration"] * d["iterations"], sc.get("public_rows", {})
    if "stop" in rows and rows["stop"] - rows.get("start", 0) < need:
        return [
            f"config key {key}: {d['iterations']} iterations x {d['queries_per_iteration']} queries "
            f"need {need} public samples; scenario {name!r} has {rows['stop'] - rows.get('start', 0)}"
        ]
    return []


def ldpdl_compare_scenarios(config: dict) -> list[str]:
    """The scenarios LDP-DL and PATE also run on for compare.csv: ``ldpdl.compare.scenarios`` that
    ``run.scenarios`` keeps."""
    return kept(config, config["ldpdl"]["compare"]["scenarios"])


def kept(config: dict, names: list[str]) -> list[str]:
    """Those of scenario ``names`` that ``run.scenarios`` keeps, in their order."""
    running = selected(config, "scenarios")
    return [s for s in names if s in running]


def _cross_check_audit(config: dict, running: dict) -> list[str]:
    problems = []
    rows = [("rknn", i, r) for i, r in enumerate(config["audit"]["rknn"])]
    rows += [("fedmd", i, r) for i, r in enumerate(config["audit"]["fedmd"])]
    rows += [("dpsgd", i, r) for i, r in enumerate(config["audit"]["dpsgd"])]
    rows += [("ldpfl", i, r) for i, r in enumerate(config["audit"]["ldpfl"])]
    rows += [("ldpdl", i, r) for i, r in enumerate(config["audit"]["ldpdl"])]
    for section, i, row in rows:
        key = f"config key audit.{section}.{i}"
        if row["scenario"] not in config["scenarios"]:
            problems.append(f"{key}: scenario {row['scenario']!r} is not defined (a variant cannot be audited)")
        elif row["scenario"] != base_scenario(config, row["scenario"]):
            problems.append(f"{key}: audit a defined scenario, not the variant {row['scenario']!r}")
        if section == "rknn" and row["encoder"] not in config["rknn"]["encoders"]:
            problems.append(f"{key}: unknown encoder {row['encoder']!r}")
        if section == "ldpfl" and row["scenario"] not in [d["scenario"] for d in config["ldpfl"]["datasets"].values()]:
            problems.append(f"{key}: scenario {row['scenario']!r} is in no ldpfl.datasets entry")
        sc = config["scenarios"].get(row["scenario"])
        nq = config["ldpdl"]["per_query"]
        if section == "ldpdl" and row["mechanism"] != "pate" and sc and nq > sc["parties"]:
            problems.append(
                f"{key}: the audited LDP-DL run asks ldpdl.per_query = {nq} owners per query, but scenario "
                f"{row['scenario']!r} has {sc['parties']} parties (owners)"
            )
    return problems


def _cross_check_dpsgd(config: dict) -> list[str]:
    """DP-SGD's scenarios exist; where it starts from the public pre-training, that model is one FedMD
    pre-trains (its architecture is among fedmd.architectures)."""
    problems = []
    d = config["dpsgd"]
    for i, name in enumerate(d["scenarios"]):
        if name not in config["scenarios"]:
            problems.append(f"config key dpsgd.scenarios.{i}: scenario {name!r} is not defined")
        elif dpsgd_pretrained(config, name) and d["arch"] not in config["fedmd"]["architectures"]:
            problems.append(
                f"config key dpsgd.arch: {d['arch']!r} starts from the public pre-training of scenario {name!r}, "
                f"which exists for fedmd.architectures only: {', '.join(config['fedmd']['architectures'])}"
            )
    return problems


def ldpfl_compare_runs(config: dict) -> list[tuple[str, float | None]]:
    """(scenario, epsilon) of every LDP-FL run on another method's split (``ldpfl.compare``) that
    ``run.scenarios`` keeps: noise-free FedAvg (epsilon None), then the adaptive range at each epsilon."""
    running = kept(config, [c["scenario"] for c in config["ldpfl"]["compare"]])
    return [
        (c["scenario"], eps)
        for c in config["ldpfl"]["compare"]
        if c["scenario"] in running
        for eps in [None, *c["epsilon"]]
    ]


def fedmd_compare_runs(config: dict) -> list[tuple[str, str]]:
    """(scenario, run) of every FedMD row on another method's split (``fedmd.compare``) that
    ``run.scenarios`` keeps: FedMD-NP, FedMD-NFDP at each k, FedMD-LDP calibrated to each ``ldp_k``."""
    entries = config["fedmd"]["compare"]
    running = kept(config, [c["scenario"] for c in entries])
    return [
        (c["scenario"], run)
        for c in entries
        if c["scenario"] in running
        for run in [
            FedmdRun("np").name,
            *[FedmdRun.nfdp(c["sampling"], k).name for k in c["k"]],
            *[FedmdRun.ldp(c["sampling"], k).name for k in c.get("ldp_k", [])],
        ]
    ]


def nfdp_requests(config: dict) -> list[tuple[str, str, str, int]]:
    """(config key, scenario, sampling, k) of every NFDP sample the config asks for: the scenarios' own
    lists, Table 2 (k and ldp_k), paper 002's Tables 3-5 and Figure 2(d), fedmd.compare."""
    out = [
        (f"scenarios.{name}.nfdp", name, sampling, k)
        for name, sc in selected(config, "scenarios").items()
        if "nfdp" in sc
        for sampling in sc["nfdp"]["sampling"]
        for k in sc["nfdp"]["k"]
    ]
    p = config["paper002"]
    for label, spec in selected(config, "table2").items():
        sc, sampling = spec["scenario"], spec["sampling"]
        out += [(f"table2.{label}.k", sc, sampling, k) for k in spec["k"] + spec.get("ldp_k", [])]
        parties = sorted(set(p["table3"]["parties"]) | set(p["figure2d"]["parties"]))
        out += [("paper002.k", party_variant(config, sc, n), sampling, p["k"]) for n in parties]
        if label in p["table4"]["noniid"]:
            out.append(("paper002.k", p["table4"]["noniid"][label], sampling, p["k"]))
        if label in p["table5"]["k"]:
            out += [(f"paper002.table5.k.{label}", sc, s, p["table5"]["k"][label]) for s in vocab.SAMPLINGS]
        out.append(("paper002.budget.k", sc, sampling, p["budget"]["k"]))
    for i, c in enumerate(config["fedmd"]["compare"]):
        out += [(f"fedmd.compare.{i}.k", c["scenario"], c["sampling"], k) for k in c["k"] + c.get("ldp_k", [])]
    return out


def dpsgd_pretrained(config: dict, scenario: str) -> bool:
    """Whether DP-SGD on ``scenario`` starts from the public pre-training: only where the public dataset
    is not the private one (pre-training reads the public dataset's train split)."""
    sc = config["scenarios"][base_scenario(config, scenario)]
    return sc["public"] != sc["private"]


def dpsgd_scenarios(config: dict) -> list[str]:
    """The scenarios DP-SGD runs on: ``dpsgd.scenarios`` that ``run.scenarios`` keeps."""
    return kept(config, config["dpsgd"]["scenarios"])


def _cross_check(config: dict) -> list[str]:
    problems = []
    for section in ("scenarios", "table2"):
        keep = config["run"][section]
        unknown = [] if keep == "all" else sorted(set(keep) - set(config[section]))
        if unknown:
            problems.append(
                f"config key run.{section}: {unknown} are not defined; defined: {', '.join(config[section])}"
            )
    running = selected(config, "scenarios")
    for key, scenario in [
        (f"table2.{label}", spec["scenario"]) for label, spec in selected(config, "table2").items()
    ] + [(f"rknn.table.{i}", row["scenario"]) for i, row in enumerate(config["rknn"]["table"])]:
        if scenario in config["scenarios"] and scenario not in running:
            problems.append(f"config key {key} needs scenario {scenario!r}, which run.scenarios leaves out")
    problems += _cross_check_papers(config) + _cross_check_ldpdl(config) + _cross_check_ldpfl(config)
    problems += _cross_check_audit(config, running) + _cross_check_dpsgd(config) + _cross_check_fedmd(config)
    encoder_problems = _cross_check_encoders(config["rknn"]["encoders"])
    problems += encoder_problems
    tasks = config["tasks"]
    for name, sc in config["scenarios"].items():
        key = f"scenarios.{name}"
        if sc["task"] not in tasks:
            problems.append(f"config key {key}.task = {sc['task']!r} is not defined; defined tasks: {', '.join(tasks)}")
            continue
        columns = LABEL_COLUMNS[sc["private"]]
        columns_used = (("task column", tasks[sc["task"]]["column"]), ("subclass_column", sc.get("subclass_column")))
        for what, column in columns_used:
            if column is not None and column not in columns:
                problems.append(
                    f"{key}: {what} {column!r} does not exist in dataset {sc['private']!r} "
                    f"(it has: {', '.join(sorted(columns))})"
                )
        uses_writers = sc["scheme"] == "writer" or sc["test"]["source"] == "writer_holdout"
        if uses_writers and sc["private"] not in WRITER_DATASETS:
            problems.append(
                f"{key}: scheme/test rule by writer needs a dataset with writer ids "
                f"({', '.join(sorted(WRITER_DATASETS))}), not {sc['private']!r}"
            )
    rknn = config["rknn"]
    for key, row in [(f"rknn.{part}.{i}", row) for part in ("table", "compare") for i, row in enumerate(rknn[part])]:
        if row["scenario"] not in config["scenarios"]:
            problems.append(
                f"config key {key}.scenario = {row['scenario']!r} is not a scenario; "
                f"scenarios: {', '.join(config['scenarios'])}"
            )
        if row["encoder"] not in config["rknn"]["encoders"]:
            problems.append(
                f"config key {key}.encoder = {row['encoder']!r} is not defined; "
                f"encoders: {', '.join(config['rknn']['encoders'])}"
            )
        if row["k"] > row["s"]:
            problems.append(f"config key {key}: k={row['k']} nearest queries of s={row['s']} queries is impossible")
        sc, encoders = config["scenarios"].get(row["scenario"]), config["rknn"]["encoders"]
        if sc and sc["public"].startswith("cifar") and row["encoder"] in encoders and not encoder_problems:
            if any(encoders[e].get("deskew") for e in encoder_chain(encoders, row["encoder"])):
                problems.append(
                    f"config key {key}: encoder {row['encoder']!r} deskews digits; scenario {row['scenario']!r} "
                    f"has colour images ({sc['public']})"
                )
    for label, spec in config["table2"].items():
        key = f"table2.{label}"
        if spec["scenario"] not in config["scenarios"]:
            problems.append(
                f"config key {key}.scenario = {spec['scenario']!r} is not a scenario; "
                f"scenarios: {', '.join(config['scenarios'])}"
            )
        problems += _ldp_k_problems(config, key, spec)
    return problems


def _cross_check_encoders(encoders: dict) -> list[str]:
    """A UMAP or SCAN encoder's input names another defined encoder, and no chain of inputs loops."""
    problems = []
    for name in encoders:
        seen = [name]
        while "input" in encoders.get(seen[-1], {}):
            nxt = encoders[seen[-1]]["input"]
            if nxt not in encoders:
                problems.append(
                    f"config key rknn.encoders.{seen[-1]}.input = {nxt!r} is not an encoder; "
                    f"encoders: {', '.join(encoders)}"
                )
                break
            if nxt in seen:
                problems.append(f"config key rknn.encoders.{name}: its inputs loop ({' -> '.join(seen + [nxt])})")
                break
            seen.append(nxt)
    return sorted(set(problems))


def encoder_chain(encoders: dict, name: str) -> list[str]:
    """The encoders that ``name`` is built on, base first, ending with ``name`` (a validated config)."""
    chain = [name]
    while "input" in encoders[chain[0]]:
        chain.insert(0, encoders[chain[0]]["input"])
    return chain


def encoder_settings(encoders: dict, name: str) -> dict:
    """An encoder's settings with its input's settings nested under ``base`` (recursively): all that
    determines its embeddings, so a change anywhere in the chain re-runs it."""
    enc = dict(encoders[name])
    if "input" in enc:
        enc["base"] = encoder_settings(encoders, enc["input"])
    return enc


def selected(config: dict, section: str) -> dict:
    """The entries of ``config[section]`` (scenarios or table2) that ``run.<section>`` keeps."""
    keep = config["run"][section]
    return dict(config[section]) if keep == "all" else {k: v for k, v in config[section].items() if k in keep}


def party_variant(config: dict, scenario: str, parties: int) -> str:
    """The scenario whose private pool is dealt to ``parties`` parties: itself, or ``<scenario>-n<N>``."""
    return scenario if parties == config["scenarios"][scenario]["parties"] else f"{scenario}-n{parties}"


def scenarios(config: dict) -> dict:
    """The scenarios a config runs: those ``run.scenarios`` keeps, and the variants with another number of
    parties that paper 002's Table 3 and Figure 2(d), paper 004's Figures 4-6 (c) and paper 001's Figure 3
    ask for (the same pool, data, task and seed, dealt to N parties; no NFDP samples of their own), and the
    repeats on other seeds (``<scenario>-s<i>``) of Table 2's, paper 002's and paper 004's Table 1's rows."""
    out = selected(config, "scenarios")
    p = config["paper002"]
    counts = sorted(set(p["table3"]["parties"]) | set(p["figure2d"]["parties"]))
    wanted = [(spec["scenario"], n) for spec in selected(config, "table2").values() for n in counts]
    figures = config["ldpdl"]["figures"]
    if config["ldpdl"]["owners"] == "parties":  # the disjoint variant's L sweep deals the pool to L parties
        wanted += [(sc, n) for sc in figures["datasets"].values() if sc in out for n in figures["owners"]]
    fl = config["ldpfl"]["datasets"].values()
    wanted += [(d["scenario"], n) for d in fl if d["scenario"] in out for n in d["clients"]]
    for base_name, n in wanted:
        name = party_variant(config, base_name, n)
        if name not in out:
            variant = {k: v for k, v in config["scenarios"][base_name].items() if k != "nfdp"}
            out[name] = {**variant, "parties": n, "seed": scenario_seed(config, base_name)}
    for spec in selected(config, "table2").values():  # Table 2's repeats: the scenario on other seeds
        for i in range(1, spec.get("seeds", 1)):
            base = config["scenarios"][spec["scenario"]]
            out[replicate(spec["scenario"], i)] = {
                **base,
                "seed": scenario_seed(config, spec["scenario"]) + i,
                "nfdp": {"sampling": [spec["sampling"]], "k": list(spec["k"])},  # repeats: NP and NFDP rows
                "replicate_of": spec["scenario"],
            }
    table = config["ldpdl"]["table"]
    for label, runs in table.get("seeds", {}).items():  # paper 004 Table 1's repeats: its scenario on other seeds
        name = table["datasets"][label]
        for i in range(1, runs):
            if name in out and replicate(name, i) not in out:
                variant = {k: v for k, v in config["scenarios"][name].items() if k != "nfdp"}
                out[replicate(name, i)] = {**variant, "seed": scenario_seed(config, name) + i, "replicate_of": name}
    for name in paper002_scenarios(config, out):  # Tables 3-5 and Figure 2(d): their scenarios on other seeds
        for i in range(1, p["seeds"]):
            if replicate(name, i) not in out:
                variant = {k: v for k, v in out[name].items() if k not in ("nfdp", "replicate_of")}
                seed = int(out[name].get("seed", scenario_seed(config, base_scenario(config, name))))
                out[replicate(name, i)] = {**variant, "seed": seed + i, "replicate_of": name}
    for base_name, mechanism in audited(config):  # the audited scenarios: canaries in party 0 (docs/audit.md)
        name = audit_variant(config, base_name, mechanism)
        if base_name in out and name not in out:
            variant = {k: v for k, v in config["scenarios"][base_name].items() if k != "nfdp"}
            audit = {"canaries": config["audit"]["canaries"], "adjacency": name.rsplit("-", 1)[1]}
            out[name] = {**variant, "seed": scenario_seed(config, base_name), "audit": audit, "audit_of": base_name}
    return out


def paper002_scenarios(config: dict, running: dict) -> list[str]:
    """The scenarios of paper 002's Tables 3-5 and Figure 2(d) among ``running``: each table2 dataset's IID
    scenario, its variants for other numbers of parties and its non-IID scenario."""
    p, names = config["paper002"], []
    counts = sorted(set(p["table3"]["parties"]) | set(p["figure2d"]["parties"]))
    for label, spec in selected(config, "table2").items():
        names += [spec["scenario"], *[party_variant(config, spec["scenario"], n) for n in counts]]
        names += [p["table4"]["noniid"][label]] if label in p["table4"]["noniid"] else []
    return [n for n in dict.fromkeys(names) if n in running]


def canary_adjacency(mechanism: str) -> str:
    """How an audit's canary differs between in and out, as the mechanism's claim's adjacency says:
    ``replace`` (true label when out) for replace-one and local claims, else ``addremove`` (absent)."""

    adjacency = registry.parse(mechanism if mechanism == "none" else f"{mechanism}-eps1.0").guarantee(1).adjacency
    return "replace" if adjacency in (Adjacency.REPLACE_ONE, Adjacency.LOCAL) else "addremove"


def audit_variant(config: dict, scenario: str, mechanism: str) -> str:
    """The scenario an audit of ``mechanism`` on ``scenario`` runs on: ``<scenario>-canaries-<adjacency>``.
    ``mechanism``: a reverse k-NN mechanism, a FedMD run (``np``: no claim; ``nfdp-...``: replace-one),
    ``dpsgd`` and ``pate`` (replace one record) or an LDP-FL run (``twopoint-...``: local, so replace;
    ``none``)."""
    if mechanism in ("np", "dpsgd", "pate") or mechanism.startswith(("nfdp-", "twopoint-")):
        adjacency = "addremove" if mechanism == "np" else "replace"
    else:
        adjacency = canary_adjacency(mechanism)
    return f"{scenario}-canaries-{adjacency}"


def audit_rows(config: dict, section: str) -> list[dict]:
    """The rows of ``audit.<section>`` (rknn, fedmd, dpsgd, ldpfl, ldpdl) whose scenario runs (``run.scenarios``)."""
    running = selected(config, "scenarios")
    return [r for r in config["audit"][section] if r["scenario"] in running]


def audited(config: dict) -> list[tuple[str, str]]:
    """(scenario, mechanism, FedMD run, ``dpsgd`` or LDP-FL run) of every audited row whose scenario runs."""
    return (
        [(r["scenario"], r["mechanism"]) for r in audit_rows(config, "rknn")]
        + [(r["scenario"], r["run"]) for r in audit_rows(config, "fedmd")]
        + [(r["scenario"], "dpsgd") for r in audit_rows(config, "dpsgd")]
        + [(r["scenario"], r["run"]) for r in audit_rows(config, "ldpfl")]
        + [(r["scenario"], r["mechanism"]) for r in audit_rows(config, "ldpdl")]
    )


def replicate(scenario: str, i: int) -> str:
    """The name of repeat ``i`` of a Table 2 scenario: itself for 0, else ``<scenario>-s<i>`` (the same
    settings on seed + i: dealt, sampled and trained anew, and where the test set is drawn (FEMNIST's held-out
    writers) drawn anew too; the public pre-training is shared)."""
    return scenario if i == 0 else f"{scenario}-s{i}"


def base_scenario(config: dict, name: str) -> str:
    """The defined scenario a variant is made from (itself for a defined one; a repeat of a variant for
    another number of parties, ``<scenario>-n<N>-s<i>``, is made from ``<scenario>``)."""
    while name not in config["scenarios"] and re.search(VARIANT, name):
        name = re.sub(VARIANT, "", name)
    return name


def scenario_seed(config: dict, name: str) -> int:
    """The seed of a scenario: its own ``seed`` key, else the master seed."""
    return int(config["scenarios"][name].get("seed", config["seed"]))
