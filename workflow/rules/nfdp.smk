# NFDP sampling (paper 002): each party draws k of its own records; the draw is the party's one
# privatized release, and its job writes the release's guarantee beside the sample.


rule nfdp_sample:
    input:
        # a party's job reads its own table and nothing else
        party=lambda wc: party_table(wc.scenario, wc.party),
    output:
        sample=res("samples/{scenario}/{sampling}-k{k}/party-{party}.parquet"),
        ledger=res("samples/{scenario}/{sampling}-k{k}/party-{party}.ledger.json"),
    log:
        res("logs/nfdp_sample/{scenario}/{sampling}-k{k}/party-{party}.log"),
    benchmark:
        res("benchmarks/nfdp_sample/{scenario}/{sampling}-k{k}/party-{party}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("nfdp_sample.py"),
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/nfdp_sample.py"


rule nfdp_ledger:
    input:
        lambda wc: [
            f"{D.sample_dir(wc.scenario, wc.sampling, wc.k)}/party-{party}.ledger.json"
            for party in party_ids(wc.scenario)
        ],
    output:
        res("samples/{scenario}/{sampling}-k{k}/ledger.csv"),
    log:
        res("logs/nfdp_ledger/{scenario}/{sampling}-k{k}.log"),
    benchmark:
        res("benchmarks/nfdp_ledger/{scenario}/{sampling}-k{k}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("nfdp_ledger.py"),
    script:
        "../scripts/nfdp_ledger.py"
