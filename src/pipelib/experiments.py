"""The training stages of the workflow: shared pre-training, FedMD rows, the centralized baseline.

Labels: a model's outputs cover the public classes first (0 .. P-1) and the private task classes
after them (P .. P+C-1), as in FedMD; task label c of a party table is output P + c.
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from . import fedmd, train
from .io import read_images, write_json, write_table
from .models import build, optimizer
from .seeding import rng

log = logging.getLogger(__name__)


def _torch_seed(seed: int, *keys) -> int:
    return int(rng(seed, *keys).integers(2**31 - 1))


def load_labelled(path, device, offset: int = 0):
    """An image table as device tensors: (uint8 images, int64 labels + offset, metadata)."""
    frame, images, meta = read_images(path)
    y = torch.as_tensor(frame["label"].to_numpy().astype(np.int64) + offset, device=device)
    return train.to_device(images, device), y, meta


def load_public_pool(index_path, data_path, device):
    """The public images a scenario's server may query (the partition's public index table)."""
    index = pq.read_table(index_path, columns=["index"]).column("index").to_numpy()
    _, images, meta = read_images(data_path)
    return train.to_device(images[index], device), meta


# ------------------------------------------------------------------------------------ pretraining

def pretrain(arch: str, public_dir, n_classes: int, epochs: int, batch: int, lr: float, seed: int, device: str,
             threads: int, out_model, out_summary, max_images: int = 0, checkpoint=None) -> dict:
    """Train ``arch`` on the labelled public data: the shared initialization of every party using it.

    ``max_images`` > 0 trains on a seeded subset of that size (reduced presets)."""
    train.set_threads(threads)
    dev = train.pick_device(device)
    x, y, meta = load_labelled(Path(public_dir) / "train.parquet", dev)
    if 0 < max_images < len(x):
        keep = torch.from_numpy(np.sort(rng(seed, "pretrain-subset").choice(len(x), max_images, replace=False)))
        x, y = x[keep.to(dev)], y[keep.to(dev)]
    x_test, y_test, _ = load_labelled(Path(public_dir) / "test.parquet", dev)
    gen = train.seed_everything(_torch_seed(seed, "pretrain", arch))
    model = train.prepare(build(arch, x.shape[1:], n_classes), dev)
    opt = optimizer(model, lr)
    history = []
    fp = train.fingerprint("pretrain", arch, str(public_dir), n_classes, epochs, batch, lr, seed, max_images)
    for epoch in train.resumable_epochs(epochs, checkpoint, fp, model, opt, gen, history):
        stats = train.fit(model, opt, x, y, train.hard_ce, 1, batch, gen)
        acc = train.accuracy(model, x_test, y_test)
        history.append({"epoch": epoch + 1, "loss": stats["loss"], "public_test_accuracy": acc,
                        "img_per_s": stats["img_per_s"]})
        log.info("pretrain %s epoch %d/%d: loss %.4f, public test accuracy %.4f (%.0f img/s)", arch, epoch + 1,
                 epochs, stats["loss"], acc, stats["img_per_s"])
    _save_model(model, out_model, {"public": meta["dataset"], "history": history})
    train.clear_checkpoint(checkpoint)
    summary = {"arch": arch, "public": meta["dataset"], "n_classes": n_classes, "epochs": epochs, "images": len(x),
               "public_test_accuracy": history[-1]["public_test_accuracy"] if history else None,
               "history": history, "device": str(dev)}
    write_json(summary, out_summary)
    return summary


def _save_model(model, path, extra: dict):
    from .io import atomic_path

    state = {"arch": model.arch.name, "in_shape": model.in_shape, "n_classes": model.n_classes,
             "state_dict": {k: v.cpu() for k, v in model.state_dict().items()}, **extra}
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_model(path, device, n_classes: int | None = None):
    """A model from a pre-training checkpoint, on ``device`` (channels-last)."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    if n_classes is not None and state["n_classes"] != n_classes:
        raise ValueError(f"{path} has {state['n_classes']} outputs, the task needs {n_classes}")
    model = build(state["arch"], state["in_shape"], state["n_classes"])
    model.load_state_dict(state["state_dict"])
    return train.prepare(model, device)


# ---------------------------------------------------------------------------------------- FedMD rows

def party_archs(architectures: list[str], n_parties: int) -> list[str]:
    """Party i uses architectures[i mod len] (heterogeneous models, as in FedMD)."""
    return [architectures[i % len(architectures)] for i in range(n_parties)]


def ledger_privacy(ledger_path) -> dict:
    """The worst party of an NFDP ledger: the row's (epsilon, delta) claim."""
    ledger = pd.read_csv(ledger_path)
    return {"epsilon": float(ledger["epsilon"].max()), "delta": float(ledger["delta"].max()),
            "epsilon_log10": float(ledger["epsilon_log10"].max()), "n": int(ledger["n"].min()),
            "delta_vacuous": bool(ledger["delta_vacuous"].any()), "k": int(ledger["k"].iloc[0]),
            "sampling": str(ledger["sampling"].iloc[0])}


def fedmd_row(scenario: str, method: str, answer: str, party_paths: list, models: dict, public_index, public_data,
              test_path, n_public_classes: int, cfg: dict, seed: int, preset: str, out_result, out_rounds,
              checkpoint=None, ledger_path=None) -> dict:
    """Run one FedMD row (``np``, ``nfdp-...`` or ``ldp-...``) and write its result and per-round accuracies.

    ``party_paths[i]`` is the only private data party i ever sees: its NFDP sample (nfdp) or all
    its records (np, ldp).  ``models`` maps architecture -> pre-trained checkpoint.
    """
    kind = method.split("-")[0]
    train.set_threads(cfg["threads"])
    dev = train.pick_device(cfg["device"])
    schedule = fedmd.Schedule.from_config(cfg)
    x_pub, _ = load_public_pool(public_index, public_data, dev)
    x_test, y_test, test_meta = load_labelled(test_path, dev, offset=n_public_classes)
    n_classes = n_public_classes + len(test_meta["task_classes"])
    archs = party_archs(cfg["architectures"], len(party_paths))

    privacy = {"epsilon": math.inf, "delta": 1.0, "epsilon_log10": math.inf, "delta_vacuous": True, "sigma": None}
    ns = [pq.read_metadata(p).num_rows for p in party_paths]  # records each party trains on
    if kind == "nfdp":
        privacy.update(ledger_privacy(ledger_path))
    elif kind == "ldp":
        target = ledger_privacy(ledger_path)  # the (epsilon, delta) of the matching NFDP row
        sigma = fedmd.noise_for(schedule, target["epsilon"], target["delta"])
        from .privacy import delta_vacuous, gaussian_epsilon

        spent = gaussian_epsilon(sigma, fedmd.releases(schedule), target["delta"])
        privacy.update({"epsilon": spent, "delta": target["delta"], "epsilon_log10": spent / math.log(10),
                        "delta_vacuous": delta_vacuous(target["delta"], min(ns)), "sigma": sigma, "n": min(ns),
                        "target_epsilon": target["epsilon"], "matched_k": target["k"]})
    torch_seed = _torch_seed(seed, "fedmd", scenario, method, answer)
    train.seed_everything(torch_seed)
    parties = []
    for i, (path, arch) in enumerate(zip(party_paths, archs)):
        x, y, meta = load_labelled(path, dev, offset=n_public_classes)
        model = load_model(models[arch], dev, n_classes)
        gen = torch.Generator().manual_seed(_torch_seed(seed, "party-shuffle", scenario, method, i))
        noise_gen = torch.Generator().manual_seed(_torch_seed(seed, "ldp-noise", scenario, method, i))
        parties.append(fedmd.Party(i, model, optimizer(model, cfg["lr"]), x, y, answer, gen,
                                   noise_sigma=privacy["sigma"] or 0.0, noise_gen=noise_gen))
    server = fedmd.Server(len(x_pub), schedule.public_per_round, answer, seed=_torch_seed(seed, "server", scenario))
    log.info("%s %s (%s answers): %d parties %s, %d private records each (min), %d public, %d test, device %s",
             scenario, method, answer, len(parties), archs, min(len(p.x) for p in parties), len(x_pub), len(x_test), dev)

    def progress(rows):
        accs = [r["accuracy"] for r in rows]
        log.info("round %d/%d: mean accuracy %.4f, parties %s (%.1f s)", rows[0]["round"], schedule.rounds,
                 float(np.mean(accs)), " ".join(f"{a:.3f}" for a in accs), rows[0]["round_seconds"])

    fp = train.fingerprint(scenario, method, answer, cfg, seed, [str(p) for p in party_paths], torch_seed)
    history = fedmd.run(parties, server, x_pub, x_test, y_test, schedule, (n_public_classes, n_classes),
                        checkpoint=checkpoint, fingerprint=fp, on_round=progress)
    wall = fedmd.wall_seconds(history)  # summed over rounds: includes the rounds before a resume
    rounds = pd.DataFrame(history).assign(scenario=scenario, method=method, answer=answer)
    write_table(pa.Table.from_pandas(rounds, preserve_index=False), out_rounds)
    n = privacy.get("n", min(ns))  # private records per party (the smallest party: the worst privacy)
    result = {"scenario": scenario, "method": method, "answer": answer, "n": n, "n_parties": len(parties),
              "k": privacy["k"] if kind == "nfdp" else n, "sampling": privacy.get("sampling"), "archs": archs,
              **{k: privacy[k] for k in ("epsilon", "delta", "epsilon_log10", "delta_vacuous", "sigma")},
              "target_epsilon": privacy.get("target_epsilon"), "matched_k": privacy.get("matched_k"),
              **fedmd.summarize(history, len(parties)), "releases_per_party": fedmd.releases(schedule),
              "public_per_round": schedule.public_per_round, "wall_seconds": wall, "device": str(dev),
              "seed": seed, "preset": preset}
    write_json(result, out_result)
    train.clear_checkpoint(checkpoint)
    log.info("final accuracy %.4f +- %.4f in %.0f s", result["accuracy"], result["accuracy_std"], wall)
    return result


# ------------------------------------------------------------------------------------- centralized

def centralized(scenario: str, arch: str, party_paths: list, model_path, test_path, n_public_classes: int,
                epochs: int, batch: int, lr: float, device: str, threads: int, seed: int, out_result,
                checkpoint=None) -> dict:
    """The utility upper bound: one model of ``arch`` trained on all parties' records pooled."""
    train.set_threads(threads)
    dev = train.pick_device(device)
    pooled = [load_labelled(p, dev, offset=n_public_classes) for p in party_paths]
    x, y = torch.cat([p[0] for p in pooled]), torch.cat([p[1] for p in pooled])
    x_test, y_test, meta = load_labelled(test_path, dev, offset=n_public_classes)
    task = (n_public_classes, n_public_classes + len(meta["task_classes"]))
    gen = train.seed_everything(_torch_seed(seed, "centralized", scenario, arch))
    model = load_model(model_path, dev, task[1])
    opt = optimizer(model, lr)
    t0 = time.perf_counter()
    fp = train.fingerprint("centralized", scenario, arch, [str(p) for p in party_paths], epochs, batch, lr, seed)
    for epoch in train.resumable_epochs(epochs, checkpoint, fp, model, opt, gen, []):
        stats = train.fit(model, opt, x, y, train.hard_ce, 1, batch, gen)
        if (epoch + 1) % max(1, epochs // 10) == 0 or epoch + 1 == epochs:
            log.info("centralized %s epoch %d/%d: loss %.4f, test accuracy %.4f", arch, epoch + 1, epochs,
                     stats["loss"], train.accuracy(model, x_test, y_test, outputs=task))
    result = {"scenario": scenario, "arch": arch, "n_pooled": len(x), "epochs": epochs,
              "accuracy": train.accuracy(model, x_test, y_test, outputs=task),
              "accuracy_any_class": train.accuracy(model, x_test, y_test), "wall_seconds": time.perf_counter() - t0,
              "device": str(dev), "seed": seed}
    write_json(result, out_result)
    train.clear_checkpoint(checkpoint)
    return result
