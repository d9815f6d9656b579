# NFDP sampling (paper 002): each party draws k of its own records; the ledger records what it spent.


rule nfdp_sample:
    input:
        # a party's job reads its own table and nothing else
        party="results/partitions/{scenario}/party-{party}.parquet",
    output:
        sample="results/samples/{scenario}/{sampling}-k{k}/party-{party}.parquet",
        ledger="results/samples/{scenario}/{sampling}-k{k}/party-{party}.ledger.json",
    log:
        "results/logs/nfdp_sample/{scenario}/{sampling}-k{k}/party-{party}.log",
    benchmark:
        "results/benchmarks/nfdp_sample/{scenario}/{sampling}-k{k}/party-{party}.tsv"
    params:
        code=code("nfdp_sample.py"),
        seed=lambda wc: scenario_seed(config, wc.scenario),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/nfdp_sample.py"


rule nfdp_ledger:
    input:
        lambda wc: [
            f"{sample_dir(wc.scenario, wc.sampling, wc.k)}/party-{party}.ledger.json"
            for party in party_ids(wc.scenario)
        ],
    output:
        "results/samples/{scenario}/{sampling}-k{k}/ledger.csv",
    log:
        "results/logs/nfdp_ledger/{scenario}/{sampling}-k{k}.log",
    benchmark:
        "results/benchmarks/nfdp_ledger/{scenario}/{sampling}-k{k}.tsv"
    params:
        code=code("nfdp_ledger.py"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/nfdp_ledger.py"


rule privacy_ledger:
    input:
        [f"{sample_dir(*key)}/ledger.csv" for key in nfdp_samples()],
    output:
        "results/privacy_ledger.csv",
    log:
        "results/logs/privacy_ledger.log",
    benchmark:
        "results/benchmarks/privacy_ledger.tsv"
    params:
        code=code("privacy_ledger.py"),
        preset=config["preset"],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/privacy_ledger.py"
