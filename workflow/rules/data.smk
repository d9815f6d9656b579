# Data chain: raw datasets -> ingested Parquet tables -> scenario partitions -> per-party tables.


if config["download"]:

    rule download:
        output:
            [
                str(D.DATA_ROOT / rel)
                for name in raw.DATASETS
                if raw.DATASETS[name].torchvision
                for rel in raw.DATASETS[name].files()
            ],
        log:
            res("logs/download/download.log"),
        benchmark:
            res("benchmarks/download/download.tsv")
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
        train=res("data/{dataset}/train.parquet"),
        test=res("data/{dataset}/test.parquet"),
        counts=res("data/{dataset}/class_counts.csv"),
        summary=res("data/{dataset}/summary.json"),
    log:
        res("logs/ingest/{dataset}.log"),
    benchmark:
        res("benchmarks/ingest/{dataset}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        code=code("ingest.py"),
        # the raw files' content, not where they lie: a copy of the data root elsewhere re-runs nothing;
        # computing it checks every md5, so a damaged file stops the run before any job starts
        raw=lambda wc: raw_content(wc.dataset),
        verify=config["verify_checksums"],
    script:
        "../scripts/ingest.py"


rule partition:
    input:
        unpack(D.scenario_inputs),
    output:
        assignment=res("partitions/{scenario}/assignment.parquet"),
        public=res("partitions/{scenario}/public.parquet"),
        test=res("partitions/{scenario}/test.parquet"),
        summary=res("partitions/{scenario}/summary.json"),
    log:
        res("logs/partition/{scenario}.log"),
    benchmark:
        res("benchmarks/partition/{scenario}.tsv")
    wildcard_constraints:
        scenario=alternatives([s for s in SCENARIOS if s not in D.AUDIT_SCENARIOS]),
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        code=code("partition.py"),
        scenario=D.partition_params,
        task=lambda wc: config["tasks"][SCENARIOS[wc.scenario]["task"]],
        seed=lambda wc: seed_of(wc.scenario),
    script:
        "../scripts/partition.py"


rule party_data:
    input:
        assignment=res("partitions/{scenario}/assignment.parquet"),
        private_train=lambda wc: D.scenario_inputs(wc)["private_train"],
        private_test=lambda wc: D.scenario_inputs(wc)["private_test"],
    output:
        res("partitions/{scenario}/party-{party}.parquet"),
    log:
        res("logs/party_data/{scenario}/party-{party}.log"),
    benchmark:
        res("benchmarks/party_data/{scenario}/party-{party}.tsv")
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
