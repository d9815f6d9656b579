# Representations for reverse k-NN labeling (paper 003): encoders fitted on public images only (a UMAP
# encoder also reads its input encoder's model, itself fitted on public images only), public
# embeddings and k-means queries (public), and each party's embedding of its own records (its job).


rule train_encoder:
    input:
        unpack(public_inputs),
        base=D.distill.encoder_base_models,
    output:
        model=res("represent/{scenario}/{encoder}/encoder.pt"),
    log:
        res("logs/train_encoder/{scenario}/{encoder}.log"),
    benchmark:
        res("benchmarks/train_encoder/{scenario}/{encoder}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=D.RKNN["runtime"],
        gpu=RKNN_GPUS,
    params:
        code=code("train_encoder.py"),
        settings=D.distill.encoder_settings,
        seed=lambda wc: seed_of(wc.scenario),
        device=D.RKNN["device"],
        precision=D.RKNN["precision"],
        checkpoint=lambda wc: f"{D.distill.represent_dir(wc.scenario, wc.encoder)}/encoder.resume.pt",
    script:
        "../scripts/train_encoder.py"


rule embed_public:
    input:
        unpack(public_inputs),
        model=D.distill.encoder_model,
    output:
        res("represent/{scenario}/{encoder}/public.npy"),
    log:
        res("logs/embed_public/{scenario}/{encoder}.log"),
    benchmark:
        res("benchmarks/embed_public/{scenario}/{encoder}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.RKNN["threads"]
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        code=code("embed_public.py"),
        settings=D.distill.encoder_settings,
        device=D.RKNN["device"],
    script:
        "../scripts/embed_public.py"


rule embed_party:
    input:
        # the party embeds its own images with the public encoder
        party=lambda wc: party_table(wc.scenario, wc.party),
        model=D.distill.encoder_model,
    output:
        res("represent/{scenario}/{encoder}/party-{party}.npy"),
    log:
        res("logs/embed_party/{scenario}/{encoder}/party-{party}.log"),
    benchmark:
        res("benchmarks/embed_party/{scenario}/{encoder}/party-{party}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        code=code("embed_party.py"),
        settings=D.distill.encoder_settings,
        device=D.RKNN["device"],
    script:
        "../scripts/embed_party.py"


rule cluster:
    input:
        res("represent/{scenario}/{encoder}/public.npy"),
    output:
        centers=res("represent/{scenario}/{encoder}/s{s}/centers.npy"),
        assign=res("represent/{scenario}/{encoder}/s{s}/assign.parquet"),
    log:
        res("logs/cluster/{scenario}/{encoder}/s{s}.log"),
    benchmark:
        res("benchmarks/cluster/{scenario}/{encoder}/s{s}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        code=code("cluster.py"),
        seed=lambda wc: seed_of(wc.scenario),
        iterations=D.RKNN["kmeans_iterations"],
        starts=D.RKNN["kmeans_starts"],
    script:
        "../scripts/cluster.py"
