# Reverse k-NN labeling (paper 003): represent -> cluster -> per-party votes -> privatize -> label -> student.
# Party jobs read their own table only; the curator (central DP) reads raw votes and writes noisy sums;
# the server's jobs (labels, students) read only noisy counts and public data.


rule train_encoder:
    input:
        unpack(public_inputs),
    output:
        "results/rknn/{scenario}/{encoder}/encoder.pt",
    log:
        "results/logs/rknn/{scenario}/{encoder}/train_encoder.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/train_encoder.tsv"
    params:
        code=code("rknn.py"),
        settings=lambda wc: RKNN["encoders"][wc.encoder],
        seed=lambda wc: scenario_seed(config, wc.scenario),
        device=RKNN["device"],
        checkpoint=lambda wc: f"{rknn_dir(wc.scenario, wc.encoder)}/encoder.resume.pt",
    threads: RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=RKNN["runtime"],
        gpu=0 if RKNN["device"] == "cpu" else 1,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule embed_public:
    input:
        unpack(public_inputs),
        model=encoder_model,
    output:
        "results/rknn/{scenario}/{encoder}/public.npy",
    log:
        "results/logs/rknn/{scenario}/{encoder}/embed_public.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/embed_public.tsv"
    params:
        code=code("rknn.py"),
        settings=lambda wc: RKNN["encoders"][wc.encoder],
        device=RKNN["device"],
    threads: RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=60,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule embed_party:
    input:
        # the party embeds its own images with the public encoder
        party="results/partitions/{scenario}/party-{party}.parquet",
        model=encoder_model,
    output:
        "results/rknn/{scenario}/{encoder}/party-{party}.npy",
    log:
        "results/logs/rknn/{scenario}/{encoder}/embed_party-{party}.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/embed_party-{party}.tsv"
    params:
        code=code("rknn.py"),
        settings=lambda wc: RKNN["encoders"][wc.encoder],
        device=RKNN["device"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule cluster:
    input:
        "results/rknn/{scenario}/{encoder}/public.npy",
    output:
        centers="results/rknn/{scenario}/{encoder}/s{s}/centers.npy",
        assign="results/rknn/{scenario}/{encoder}/s{s}/assign.parquet",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/cluster.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/cluster.tsv"
    params:
        code=code("rknn.py"),
        seed=lambda wc: scenario_seed(config, wc.scenario),
        iterations=RKNN["kmeans_iterations"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule party_votes:
    input:
        party="results/partitions/{scenario}/party-{party}.parquet",
        embeddings="results/rknn/{scenario}/{encoder}/party-{party}.npy",
        centers="results/rknn/{scenario}/{encoder}/s{s}/centers.npy",
    output:
        "results/rknn/{scenario}/{encoder}/s{s}/k{k}/votes/party-{party}.npy",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/k{k}/votes-party-{party}.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/k{k}/votes-party-{party}.tsv"
    params:
        code=code("rknn.py"),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule party_local_answer:
    input:
        party="results/partitions/{scenario}/party-{party}.parquet",
        embeddings="results/rknn/{scenario}/{encoder}/party-{party}.npy",
        centers="results/rknn/{scenario}/{encoder}/s{s}/centers.npy",
    output:
        "results/rknn/{scenario}/{encoder}/s{s}/k{k}/{lmech}/party-{party}.json",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/k{k}/{lmech}/party-{party}.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/k{k}/{lmech}/party-{party}.tsv"
    params:
        code=code("rknn.py"),
        seed=lambda wc: scenario_seed(config, wc.scenario),
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule curate:
    input:
        lambda wc: [f"{rknn_dir(wc.scenario, wc.encoder, wc.s, wc.k)}/votes/party-{i}.npy" for i in party_ids(wc.scenario)],
    output:
        "results/rknn/{scenario}/{encoder}/s{s}/k{k}/{cmech}/noisy_counts.npy",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/k{k}/{cmech}/curate.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/k{k}/{cmech}/curate.tsv"
    params:
        code=code("rknn.py"),
        seed=lambda wc: scenario_seed(config, wc.scenario),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule aggregate_local:
    input:
        lambda wc: [f"{rknn_dir(wc.scenario, wc.encoder, wc.s, wc.k)}/{wc.lmech}/party-{i}.json" for i in party_ids(wc.scenario)],
    output:
        "results/rknn/{scenario}/{encoder}/s{s}/k{k}/{lmech}/noisy_counts.npy",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/k{k}/{lmech}/aggregate.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/k{k}/{lmech}/aggregate.tsv"
    params:
        code=code("rknn.py"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule label_queries:
    input:
        counts="results/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/noisy_counts.npy",
        assign="results/rknn/{scenario}/{encoder}/s{s}/assign.parquet",
    output:
        "results/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/labels.parquet",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/labels.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/labels.tsv"
    params:
        code=code("rknn.py"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule student:
    input:
        unpack(public_inputs),
        labels="results/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/labels.parquet",
        test="results/partitions/{scenario}/test.parquet",
    output:
        "results/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/student.json",
    log:
        "results/logs/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/student.log",
    benchmark:
        "results/benchmarks/rknn/{scenario}/{encoder}/s{s}/k{k}/{mech}/student.tsv"
    params:
        code=code("rknn.py"),
        settings=RKNN["student"],
        seed=lambda wc: scenario_seed(config, wc.scenario),
        device=RKNN["device"],
        # label accuracy needs public labels in the task's label space (same dataset)
        same_labels=lambda wc: SCENARIOS[wc.scenario]["public"] == SCENARIOS[wc.scenario]["private"],
        checkpoint=lambda wc: f"{rknn_dir(wc.scenario, wc.encoder, wc.s, wc.k)}/{wc.mech}/student.resume.pt",
    threads: RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=RKNN["runtime"],
        gpu=0 if RKNN["device"] == "cpu" else 1,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"


rule table_rknn:
    input:
        [f"{path}/student.json" for _, path in rknn_rows()],
    output:
        "results/table_rknn.csv",
    log:
        "results/logs/table_rknn.log",
    benchmark:
        "results/benchmarks/table_rknn.tsv"
    params:
        code=code("rknn.py"),
        rows=[row for row, _ in rknn_rows()],
        preset=config["preset"],
        seeds=[scenario_seed(config, row["scenario"]) for row, _ in rknn_rows()],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/pipelib.yaml"
    script:
        "../scripts/rknn.py"
