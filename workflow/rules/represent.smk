# Representations for reverse k-NN labeling (paper 003): encoders fitted on public images only, public
# embeddings and k-means queries (public), and each party's embedding of its own records (its job).


rule train_encoder:
    input:
        unpack(public_inputs),
    output:
        "results/represent/{scenario}/{encoder}/encoder.pt",
    log:
        "results/logs/train_encoder/{scenario}/{encoder}.log",
    benchmark:
        "results/benchmarks/train_encoder/{scenario}/{encoder}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=RKNN["runtime"],
        gpu=RKNN_GPUS,
    params:
        code=code("train_encoder.py"),
        settings=lambda wc: RKNN["encoders"][wc.encoder],
        seed=lambda wc: scenario_seed(config, wc.scenario),
        device=RKNN["device"],
        checkpoint=lambda wc: f"{represent_dir(wc.scenario, wc.encoder)}/encoder.resume.pt",
    script:
        "../scripts/train_encoder.py"


rule embed_public:
    input:
        unpack(public_inputs),
        model=encoder_model,
    output:
        "results/represent/{scenario}/{encoder}/public.npy",
    log:
        "results/logs/embed_public/{scenario}/{encoder}.log",
    benchmark:
        "results/benchmarks/embed_public/{scenario}/{encoder}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        code=code("embed_public.py"),
        settings=lambda wc: RKNN["encoders"][wc.encoder],
        device=RKNN["device"],
    script:
        "../scripts/embed_public.py"


rule embed_party:
    input:
        # the party embeds its own images with the public encoder
        party=lambda wc: party_table(wc.scenario, wc.party),
        model=encoder_model,
    output:
        "results/represent/{scenario}/{encoder}/party-{party}.npy",
    log:
        "results/logs/embed_party/{scenario}/{encoder}/party-{party}.log",
    benchmark:
        "results/benchmarks/embed_party/{scenario}/{encoder}/party-{party}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        code=code("embed_party.py"),
        settings=lambda wc: RKNN["encoders"][wc.encoder],
        device=RKNN["device"],
    script:
        "../scripts/embed_party.py"


rule cluster:
    input:
        "results/represent/{scenario}/{encoder}/public.npy",
    output:
        centers="results/represent/{scenario}/{encoder}/s{s}/centers.npy",
        assign="results/represent/{scenario}/{encoder}/s{s}/assign.parquet",
    log:
        "results/logs/cluster/{scenario}/{encoder}/s{s}.log",
    benchmark:
        "results/benchmarks/cluster/{scenario}/{encoder}/s{s}.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        code=code("cluster.py"),
        seed=lambda wc: scenario_seed(config, wc.scenario),
        iterations=RKNN["kmeans_iterations"],
    script:
        "../scripts/cluster.py"
