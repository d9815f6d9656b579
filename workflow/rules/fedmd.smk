# FedMD-NFDP (paper 002): shared pre-training, one job per Table 2 row (all parties and the server of
# a row run in that one job, the boundary kept in code), and the centralized baseline.


rule pretrain:
    input:
        train="results/data/{public}/train.parquet",
        test="results/data/{public}/test.parquet",
    output:
        model="results/pretrain/{public}/{arch}-c{n_classes}.pt",
        summary="results/pretrain/{public}/{arch}-c{n_classes}.json",
    log:
        "results/logs/pretrain/{public}/{arch}-c{n_classes}.log",
    benchmark:
        "results/benchmarks/pretrain/{public}/{arch}-c{n_classes}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: FEDMD["threads"]
    resources:
        mem_mb=8000,
        runtime=FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    params:
        code=code("pretrain.py"),
        settings=FEDMD["pretrain"],
        lr=FEDMD["lr"],
        device=FEDMD["device"],
        seed=config["seed"],
        checkpoint=lambda wc: f"results/pretrain/{wc.public}/{wc.arch}-c{wc.n_classes}.resume.pt",
    script:
        "../scripts/pretrain.py"


rule fedmd:
    input:
        unpack(fedmd_inputs),
    output:
        result="results/fedmd/{scenario}/{answer}/{run}/result.json",
        rounds="results/fedmd/{scenario}/{answer}/{run}/rounds.parquet",
        models="results/fedmd/{scenario}/{answer}/{run}/models.pt",
        releases="results/fedmd/{scenario}/{answer}/{run}/releases.json",
    log:
        "results/logs/fedmd/{scenario}/{answer}/{run}.log",
    benchmark:
        "results/benchmarks/fedmd/{scenario}/{answer}/{run}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: FEDMD["threads"]
    resources:
        mem_mb=12000,
        runtime=FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    params:
        code=code("fedmd.py"),
        fedmd=lambda wc: {**fedmd_params(), "answer": wc.answer},
        archs=lambda wc: sorted(set(party_archs(wc.scenario))),
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: scenario_seed(config, wc.scenario),
        # only FedMD-LDP draws noise in this job (NFDP's randomness is in its samples, an input)
        randomness=lambda wc: (
            config["privacy"]["randomness"] if wc.run.startswith("ldp") else "none"
        ),
        preset=config["preset"],
        # progress is saved here after every round; a killed or pre-empted job resumes from it
        checkpoint=lambda wc: f"results/fedmd/{wc.scenario}/{wc.answer}/{wc.run}/resume.pt",
    script:
        "../scripts/fedmd.py"


rule centralized:
    input:
        parties=lambda wc: [party_table(wc.scenario, i) for i in party_ids(wc.scenario)],
        model=lambda wc: pretrained(wc.scenario, wc.arch),
        test="results/partitions/{scenario}/test.parquet",
    output:
        result="results/centralized/{scenario}/{arch}/result.json",
        model="results/centralized/{scenario}/{arch}/model.pt",
    log:
        "results/logs/centralized/{scenario}/{arch}.log",
    benchmark:
        "results/benchmarks/centralized/{scenario}/{arch}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: FEDMD["threads"]
    resources:
        mem_mb=8000,
        runtime=FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    params:
        code=code("centralized.py"),
        settings=FEDMD["centralized"],
        lr=FEDMD["lr"],
        device=FEDMD["device"],
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: scenario_seed(config, wc.scenario),
        preset=config["preset"],
        checkpoint=lambda wc: f"results/centralized/{wc.scenario}/{wc.arch}/resume.pt",
    script:
        "../scripts/centralized.py"
