# FedMD-NFDP (paper 002): shared pre-training, one job per Table 2 row (all parties and the server of
# a row run in that one job, the boundary kept in code), and the centralized baseline.  The budget
# ablation (paper002.budget) re-runs rows at other rounds x public queries and pre-training epochs:
# pretrain_epochs and fedmd_budget, the same jobs with those settings from the path.


rule pretrain:
    input:
        train=res("data/{public}/train.parquet"),
        test=res("data/{public}/test.parquet"),
    output:
        model=res("pretrain/{public}/{arch}-c{n_classes}.pt"),
        summary=res("pretrain/{public}/{arch}-c{n_classes}.json"),
    log:
        res("logs/pretrain/{public}/{arch}-c{n_classes}.log"),
    benchmark:
        res("benchmarks/pretrain/{public}/{arch}-c{n_classes}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.FEDMD["threads"]
    resources:
        mem_mb=8000,
        runtime=D.FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    params:
        code=code("pretrain.py"),
        settings=D.FEDMD["pretrain"],
        lr=D.FEDMD["lr"],
        device=D.FEDMD["device"],
        precision=D.FEDMD["precision"],
        seed=config["seed"],
        checkpoint=lambda wc: res(
            f"pretrain/{wc.public}/{wc.arch}-c{wc.n_classes}.resume.pt"
        ),
    script:
        "../scripts/pretrain.py"


# Where a scenario's public pool is a slice of a dataset whose other rows are private (papers 003 and
# 004's splits), the shared initialization learns from that pool alone, scored on the scenario's test split.
use rule pretrain as pretrain_pool with:
    input:
        train=res("partitions/{scenario}/public.parquet"),
        test=res("partitions/{scenario}/test.parquet"),
    output:
        model=res("pretrain_pool/{scenario}/{arch}-c{n_classes}.pt"),
        summary=res("pretrain_pool/{scenario}/{arch}-c{n_classes}.json"),
    log:
        res("logs/pretrain_pool/{scenario}/{arch}-c{n_classes}.log"),
    benchmark:
        res("benchmarks/pretrain_pool/{scenario}/{arch}-c{n_classes}.tsv")
    params:
        code=code("pretrain.py"),
        settings=D.FEDMD["pretrain"],
        lr=D.FEDMD["lr"],
        device=D.FEDMD["device"],
        precision=D.FEDMD["precision"],
        seed=lambda wc: seed_of(wc.scenario),
        checkpoint=lambda wc: res(
            f"pretrain_pool/{wc.scenario}/{wc.arch}-c{wc.n_classes}.resume.pt"
        ),


rule fedmd:
    input:
        unpack(D.fedmd.inputs),
    output:
        result=res("fedmd/{scenario}/{answer}/{run}/result.json"),
        rounds=res("fedmd/{scenario}/{answer}/{run}/rounds.parquet"),
        models=res("fedmd/{scenario}/{answer}/{run}/models.pt"),
        releases=res("fedmd/{scenario}/{answer}/{run}/releases.json"),
    log:
        res("logs/fedmd/{scenario}/{answer}/{run}.log"),
    benchmark:
        res("benchmarks/fedmd/{scenario}/{answer}/{run}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.FEDMD["threads"]
    resources:
        mem_mb=12000,
        runtime=D.FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    params:
        code=code("fedmd.py"),
        fedmd=D.fedmd.settings,
        archs=lambda wc: sorted(set(D.fedmd.party_archs(wc.scenario))),
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: seed_of(wc.scenario),
        # only FedMD-LDP draws noise in this job (NFDP's randomness is in its samples, an input)
        randomness=lambda wc: (
            config["privacy"]["randomness"]
            if FedmdRun.parse(wc.run).draws_noise
            else "none"
        ),
        preset=config["preset"],
        precision=D.FEDMD["precision"],
        # progress is saved here after every round; a killed or pre-empted job resumes from it
        checkpoint=lambda wc: res(f"fedmd/{wc.scenario}/{wc.answer}/{wc.run}/resume.pt"),
    script:
        "../scripts/fedmd.py"


# The shared initialization at another number of epochs (FedMD's budget ablation).
use rule pretrain as pretrain_epochs with:
    output:
        model=res("pretrain/{public}/e{epochs}/{arch}-c{n_classes}.pt"),
        summary=res("pretrain/{public}/e{epochs}/{arch}-c{n_classes}.json"),
    log:
        res("logs/pretrain/{public}/e{epochs}/{arch}-c{n_classes}.log"),
    benchmark:
        res("benchmarks/pretrain/{public}/e{epochs}/{arch}-c{n_classes}.tsv")
    params:
        code=code("pretrain.py"),
        settings=lambda wc: {**D.FEDMD["pretrain"], "epochs": int(wc.epochs)},
        lr=D.FEDMD["lr"],
        device=D.FEDMD["device"],
        precision=D.FEDMD["precision"],
        seed=config["seed"],
        checkpoint=lambda wc: res(
            f"pretrain/{wc.public}/e{wc.epochs}/{wc.arch}-c{wc.n_classes}.resume.pt"
        ),


# A FedMD row at R rounds of q public queries, from models pre-trained pe epochs (the budget ablation;
# the folder R<rounds>-q<q>-pe<pe> is pipelib.runs.BudgetPoint's name).
BUDGET_RUN = f"fedmd_budget/{{scenario}}/{{answer}}/{BUDGET_WILDCARDS}/{{run}}"


use rule fedmd as fedmd_budget with:
    output:
        result=res(f"{BUDGET_RUN}/result.json"),
        rounds=res(f"{BUDGET_RUN}/rounds.parquet"),
        models=res(f"{BUDGET_RUN}/models.pt"),
        releases=res(f"{BUDGET_RUN}/releases.json"),
    log:
        res(f"logs/{BUDGET_RUN}.log"),
    benchmark:
        res(f"benchmarks/{BUDGET_RUN}.tsv")
    params:
        code=code("fedmd.py"),
        fedmd=D.fedmd.settings,
        archs=lambda wc: sorted(set(D.fedmd.party_archs(wc.scenario))),
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: seed_of(wc.scenario),
        randomness=lambda wc: (
            config["privacy"]["randomness"]
            if FedmdRun.parse(wc.run).draws_noise
            else "none"
        ),
        preset=config["preset"],
        precision=D.FEDMD["precision"],
        checkpoint=lambda wc: res(
            f"fedmd_budget/{wc.scenario}/{wc.answer}/{BudgetPoint.of(wc).name}/{wc.run}/resume.pt"
        ),


rule centralized:
    input:
        parties=lambda wc: [party_table(wc.scenario, i) for i in party_ids(wc.scenario)],
        model=lambda wc: D.fedmd.pretrained(wc.scenario, wc.arch),
        test=res("partitions/{scenario}/test.parquet"),
    output:
        result=res("centralized/{scenario}/{arch}/result.json"),
        model=res("centralized/{scenario}/{arch}/model.pt"),
    log:
        res("logs/centralized/{scenario}/{arch}.log"),
    benchmark:
        res("benchmarks/centralized/{scenario}/{arch}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.FEDMD["threads"]
    resources:
        mem_mb=8000,
        runtime=D.FEDMD["runtime"],
        gpu=TRAIN_GPUS,
    params:
        code=code("centralized.py"),
        settings=D.FEDMD["centralized"],
        lr=D.FEDMD["lr"],
        device=D.FEDMD["device"],
        precision=D.FEDMD["precision"],
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: seed_of(wc.scenario),
        preset=config["preset"],
        checkpoint=lambda wc: res(f"centralized/{wc.scenario}/{wc.arch}/resume.pt"),
    script:
        "../scripts/centralized.py"


# FedMD's loop at small k (paper002.ablation): an NFDP row of Table 2 re-run with one variant of the loop (its
# settings from the config, at the ablation's budget), on the same samples, seeds and pre-trained models.
use rule fedmd as fedmd_ablation with:
    input:
        unpack(D.ablation.inputs),
    output:
        result=res("fedmd_ablation/{scenario}/{variant}/{run}/result.json"),
        rounds=res("fedmd_ablation/{scenario}/{variant}/{run}/rounds.parquet"),
        models=res("fedmd_ablation/{scenario}/{variant}/{run}/models.pt"),
        releases=res("fedmd_ablation/{scenario}/{variant}/{run}/releases.json"),
    log:
        res("logs/fedmd_ablation/{scenario}/{variant}/{run}.log"),
    benchmark:
        res("benchmarks/fedmd_ablation/{scenario}/{variant}/{run}.tsv")
    params:
        code=code("fedmd.py"),
        fedmd=D.fedmd.settings,
        archs=lambda wc: sorted(set(D.fedmd.party_archs(wc.scenario))),
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: seed_of(wc.scenario),
        randomness="none",
        preset=config["preset"],
        precision=D.FEDMD["precision"],
        checkpoint=lambda wc: res(
            f"fedmd_ablation/{wc.scenario}/{wc.variant}/{wc.run}/resume.pt"
        ),


# The pooled ceiling of an NFDP row: each architecture trained on the union of the parties' samples (the same
# draws), from models pre-trained pe epochs, for e epochs: what the parties' records allow without federation.
use rule centralized as centralized_pooled with:
    input:
        parties=lambda wc: [
            f"{D.sample_dir(wc.scenario, wc.sampling, wc.k)}/party-{i}.parquet"
            for i in party_ids(wc.scenario)
        ],
        model=lambda wc: D.fedmd.pretrained(wc.scenario, wc.arch, wc.pe),
        test=res("partitions/{scenario}/test.parquet"),
    output:
        result=res(
            "centralized_pooled/{scenario}/{sampling}-k{k}/pe{pe}-e{epochs}/{arch}/result.json"
        ),
        model=res(
            "centralized_pooled/{scenario}/{sampling}-k{k}/pe{pe}-e{epochs}/{arch}/model.pt"
        ),
    log:
        res(
            "logs/centralized_pooled/{scenario}/{sampling}-k{k}/pe{pe}-e{epochs}/{arch}.log"
        ),
    benchmark:
        res(
            "benchmarks/centralized_pooled/{scenario}/{sampling}-k{k}/pe{pe}-e{epochs}/{arch}.tsv"
        )
    params:
        code=code("centralized.py"),
        settings=lambda wc: {**D.FEDMD["centralized"], "epochs": int(wc.epochs)},
        lr=D.FEDMD["lr"],
        device=D.FEDMD["device"],
        precision=D.FEDMD["precision"],
        n_public_classes=lambda wc: raw.dataset(
            SCENARIOS[wc.scenario]["public"]
        ).classes,
        seed=lambda wc: seed_of(wc.scenario),
        preset=config["preset"],
        checkpoint=lambda wc: res(
            f"centralized_pooled/{wc.scenario}/{wc.sampling}-k{wc.k}/pe{wc.pe}-e{wc.epochs}/{wc.arch}/resume.pt"
        ),
