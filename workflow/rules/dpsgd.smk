# DP-SGD on a scenario's pooled private data (pipelib.methods.dpsgd): the central-DP baseline of
# results/compare.csv.  Role "baseline" (pipelib.boundary): it reads every party's records, like the
# centralized baseline; unlike it, its model is a privatized release, with its guarantee in releases.json.


rule dpsgd:
    input:
        unpack(D.dpsgd.inputs),
    output:
        result=res("dpsgd/{scenario}/{arch}/eps{eps}/result.json"),
        model=res("dpsgd/{scenario}/{arch}/eps{eps}/model.pt"),
        releases=res("dpsgd/{scenario}/{arch}/eps{eps}/releases.json"),
    log:
        res("logs/dpsgd/{scenario}/{arch}/eps{eps}.log"),
    benchmark:
        res("benchmarks/dpsgd/{scenario}/{arch}/eps{eps}.tsv")
    wildcard_constraints:
        eps=EPS,
    conda:
        "../envs/pipelib.yaml"
    threads: D.DPSGD["threads"]
    resources:
        mem_mb=4000,
        runtime=D.DPSGD["runtime"],
        gpu=DPSGD_GPUS,
    params:
        code=code("dpsgd.py"),
        settings={k: D.DPSGD[k] for k in ("epochs", "batch", "lr", "max_grad_norm")},
        delta=D.DPSGD["delta"],
        device=D.DPSGD["device"],
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
        preset=config["preset"],
    script:
        "../scripts/dpsgd.py"
