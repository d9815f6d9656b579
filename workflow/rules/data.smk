# Data chain: raw datasets -> ingested Parquet tables -> scenario partitions -> per-party tables.


if config["download"]:

    rule download:
        output:
            [
                str(DATA_ROOT / rel)
                for name in raw.DATASETS
                if raw.DATASETS[name].torchvision
                for rel in raw.DATASETS[name].files()
            ],
        log:
            "results/logs/download/download.log",
        benchmark:
            "results/benchmarks/download/download.tsv"
        conda:
            "../envs/pipelib.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=60,
        params:
            code=code("download.py"),
            data_root=config["data_root"],
            datasets=[name for name, spec in raw.DATASETS.items() if spec.torchvision],
        script:
            "../scripts/download.py"


rule ingest:
    input:
        raw=raw_inputs,
    output:
        train="results/data/{dataset}/train.parquet",
        test="results/data/{dataset}/test.parquet",
        counts="results/data/{dataset}/class_counts.csv",
        summary="results/data/{dataset}/summary.json",
    log:
        "results/logs/ingest/{dataset}.log",
    benchmark:
        "results/benchmarks/ingest/{dataset}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        code=code("ingest.py"),
        data_root=config["data_root"],
        verify=config["verify_checksums"],
    script:
        "../scripts/ingest.py"


rule partition:
    input:
        unpack(scenario_inputs),
    output:
        assignment="results/partitions/{scenario}/assignment.parquet",
        public="results/partitions/{scenario}/public.parquet",
        test="results/partitions/{scenario}/test.parquet",
        summary="results/partitions/{scenario}/summary.json",
    log:
        "results/logs/partition/{scenario}.log",
    benchmark:
        "results/benchmarks/partition/{scenario}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        code=code("partition.py"),
        scenario=partition_params,
        task=lambda wc: config["tasks"][SCENARIOS[wc.scenario]["task"]],
        seed=lambda wc: scenario_seed(config, wc.scenario),
    script:
        "../scripts/partition.py"


rule party_data:
    input:
        assignment="results/partitions/{scenario}/assignment.parquet",
        private_train=lambda wc: scenario_inputs(wc)["private_train"],
        private_test=lambda wc: scenario_inputs(wc)["private_test"],
    output:
        "results/partitions/{scenario}/party-{party}.parquet",
    log:
        "results/logs/party_data/{scenario}/party-{party}.log",
    benchmark:
        "results/benchmarks/party_data/{scenario}/party-{party}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("party_data.py"),
    script:
        "../scripts/party_data.py"
