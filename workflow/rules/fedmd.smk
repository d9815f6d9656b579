# FedMD-NFDP (paper 002): shared pre-training, one job per Table 2 row, the centralized baseline, the table.


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
    wildcard_constraints:
        public="|".join(raw.DATASETS),
    params:
        code=code("pretrain.py"),
        settings=FEDMD["pretrain"],
        lr=FEDMD["lr"],
        device=FEDMD["device"],
        seed=config["seed"],
        checkpoint=lambda wc: f"results/pretrain/{wc.public}/{wc.arch}-c{wc.n_classes}.resume.pt",
    threads: FEDMD["threads"]
    resources:
        mem_mb=8000,
        runtime=FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/pretrain.py"


rule fedmd:
    input:
        unpack(fedmd_inputs),
    output:
        result="results/fedmd/{scenario}/{answer}/{method}/result.json",
        rounds="results/fedmd/{scenario}/{answer}/{method}/rounds.parquet",
    log:
        "results/logs/fedmd/{scenario}/{answer}/{method}.log",
    benchmark:
        "results/benchmarks/fedmd/{scenario}/{answer}/{method}.tsv"
    params:
        code=code("fedmd.py"),
        fedmd=lambda wc: {**fedmd_params(), "answer": wc.answer},
        archs=lambda wc: sorted(set(party_archs(wc.scenario))),
        n_public_classes=lambda wc: raw.dataset(SCENARIOS[wc.scenario]["public"]).classes,
        seed=lambda wc: scenario_seed(config, wc.scenario),
        preset=config["preset"],
        # progress is saved here after every round; a killed or pre-empted job resumes from it
        checkpoint=lambda wc: f"results/fedmd/{wc.scenario}/{wc.answer}/{wc.method}/resume.pt",
    threads: FEDMD["threads"]
    resources:
        mem_mb=12000,
        runtime=FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/fedmd.py"


rule centralized:
    input:
        parties=lambda wc: [f"results/partitions/{wc.scenario}/party-{i}.parquet" for i in party_ids(wc.scenario)],
        model=lambda wc: pretrained(wc.scenario, wc.arch),
        test="results/partitions/{scenario}/test.parquet",
    output:
        "results/centralized/{scenario}/{arch}.json",
    log:
        "results/logs/centralized/{scenario}/{arch}.log",
    benchmark:
        "results/benchmarks/centralized/{scenario}/{arch}.tsv"
    params:
        code=code("centralized.py"),
        settings=FEDMD["centralized"],
        lr=FEDMD["lr"],
        device=FEDMD["device"],
        n_public_classes=lambda wc: raw.dataset(SCENARIOS[wc.scenario]["public"]).classes,
        seed=lambda wc: scenario_seed(config, wc.scenario),
        checkpoint=lambda wc: f"results/centralized/{wc.scenario}/{wc.arch}.resume.pt",
    threads: FEDMD["threads"]
    resources:
        mem_mb=8000,
        runtime=FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/centralized.py"


rule table2:
    input:
        results=[f"{fedmd_dir(*row)}/result.json" for row in table2_rows()],
        rounds=[f"{fedmd_dir(*row)}/rounds.parquet" for row in table2_rows()],
        centralized=[path for _, _, path in centralized_results()],
    output:
        csv="results/table2.csv",
        rounds="results/table2_rounds.parquet",
    log:
        "results/logs/table2.log",
    benchmark:
        "results/benchmarks/table2.tsv"
    params:
        code=code("table2.py"),
        datasets={label: {**spec, "party_archs": party_archs(spec["scenario"])} for label, spec in TABLE2.items()},
        rows=table2_rows(),
        centralized=[(label, arch) for label, arch, _ in centralized_results()],
        preset=config["preset"],
        seed=config["seed"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/table2.py"
