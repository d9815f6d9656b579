# The distillation stage (reverse k-NN and PATE; LDP-DL's active sampling runs its own rules in ldpdl.smk:
# docs/development.md "Adding a method"): a party's teacher answers (PATE: every teacher's votes in one
# job) -> privatized (local: in the party's job; central: by the trusted curator) -> aggregated by the
# server from privatized releases only -> labels for the public set -> a student -> a result row.
# Paths: results/distill/{scenario}/{teacher}/{mech}/..., teacher = <kind>-<its parameters>.


rule distill_answers:
    input:
        # a party's teacher reads its own table and its own derived files only
        unpack(
            lambda wc: {
                "party": party_table(wc.scenario, wc.party),
                **D.distill.teacher_kind(wc)["answers"](wc),
            }
        ),
    output:
        res("distill/{scenario}/{teacher}/answers/party-{party}.npy"),
    log:
        res("logs/distill_answers/{scenario}/{teacher}/party-{party}.log"),
    benchmark:
        res("benchmarks/distill_answers/{scenario}/{teacher}/party-{party}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("distill_answers.py"),
    script:
        "../scripts/distill_answers.py"


rule distill_release:
    input:
        unpack(
            lambda wc: {
                "party": party_table(wc.scenario, wc.party),
                **D.distill.teacher_kind(wc)["answers"](wc),
            }
        ),
    output:
        release=res("distill/{scenario}/{teacher}/{lmech}/release/party-{party}.json"),
        guarantee=res(
            "distill/{scenario}/{teacher}/{lmech}/release/party-{party}.guarantee.json"
        ),
    log:
        res("logs/distill_release/{scenario}/{teacher}/{lmech}/party-{party}.log"),
    benchmark:
        res("benchmarks/distill_release/{scenario}/{teacher}/{lmech}/party-{party}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        code=code("distill_release.py"),
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/distill_release.py"


rule distill_votes:
    input:
        # every PATE teacher votes with its own model only (pipelib.methods.teachers.teacher_votes)
        unpack(D.distill.pate_votes_inputs),
    output:
        answers=res("distill/{scenario}/{teacher}/answers/teachers.npy"),
    log:
        res("logs/distill_votes/{scenario}/{teacher}.log"),
    benchmark:
        res("benchmarks/distill_votes/{scenario}/{teacher}.tsv")
    wildcard_constraints:
        teacher=PATE_TEACHERS.pattern,
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        code=code("distill_votes.py"),
        settings=D.ldpdl.pate_teacher_settings,
        seed=lambda wc: seed_of(wc.scenario),
    script:
        "../scripts/distill_votes.py"


rule distill_curate:
    input:
        unpack(lambda wc: D.distill.teacher_kind(wc)["curate"](wc)),
    output:
        release=res("distill/{scenario}/{teacher}/{cmech}/release/curated.npy"),
        guarantee=res(
            "distill/{scenario}/{teacher}/{cmech}/release/curated.guarantee.json"
        ),
    log:
        res("logs/distill_curate/{scenario}/{teacher}/{cmech}.log"),
    benchmark:
        res("benchmarks/distill_curate/{scenario}/{teacher}/{cmech}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("distill_curate.py"),
        delta=lambda wc: D.distill.teacher_kind(wc)["settings"].get("delta"),
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/distill_curate.py"


rule distill_aggregate:
    input:
        unpack(D.distill.aggregate_inputs),
    output:
        counts=res("distill/{scenario}/{teacher}/{mech}/counts.npy"),
        summary=res("distill/{scenario}/{teacher}/{mech}/aggregate.json"),
    log:
        res("logs/distill_aggregate/{scenario}/{teacher}/{mech}.log"),
    benchmark:
        res("benchmarks/distill_aggregate/{scenario}/{teacher}/{mech}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("distill_aggregate.py"),
    script:
        "../scripts/distill_aggregate.py"


rule distill_label:
    input:
        unpack(
            lambda wc: {
                "counts": f"{D.distill.folder(wc.scenario, wc.teacher, wc.mech)}/counts.npy",
                **D.distill.teacher_kind(wc)["label"](wc),
            }
        ),
    output:
        labels=res("distill/{scenario}/{teacher}/{mech}/labels.parquet"),
    log:
        res("logs/distill_label/{scenario}/{teacher}/{mech}.log"),
    benchmark:
        res("benchmarks/distill_label/{scenario}/{teacher}/{mech}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("distill_label.py"),
        seed=lambda wc: seed_of(wc.scenario),
    script:
        "../scripts/distill_label.py"


rule distill_student:
    input:
        unpack(public_inputs),
        unpack(lambda wc: D.distill.teacher_kind(wc)["student"](wc)),
        labels=res("distill/{scenario}/{teacher}/{mech}/labels.parquet"),
        summary=res("distill/{scenario}/{teacher}/{mech}/aggregate.json"),
        test=res("partitions/{scenario}/test.parquet"),
    output:
        result=res("distill/{scenario}/{teacher}/{mech}/result.json"),
        model=res("distill/{scenario}/{teacher}/{mech}/student.pt"),
    log:
        res("logs/distill_student/{scenario}/{teacher}/{mech}.log"),
    benchmark:
        res("benchmarks/distill_student/{scenario}/{teacher}/{mech}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: lambda wc: D.distill.teacher_kind(wc)["settings"]["threads"]
    resources:
        mem_mb=8000,
        runtime=lambda wc: D.distill.teacher_kind(wc)["settings"]["runtime"],
        gpu=lambda wc: (
            0 if D.distill.teacher_kind(wc)["settings"]["device"] == "cpu" else 1
        ),
    params:
        code=code("distill_student.py"),
        settings=lambda wc: D.distill.teacher_kind(wc)["settings"]["student"],
        loss=lambda wc: D.distill.teacher_kind(wc)["settings"].get("loss"),
        seed=lambda wc: seed_of(wc.scenario),
        device=lambda wc: D.distill.teacher_kind(wc)["settings"]["device"],
        precision=lambda wc: D.distill.teacher_kind(wc)["settings"]["precision"],
        preset=config["preset"],
        # label accuracy needs public labels in the task's label space (same dataset)
        same_labels=lambda wc: SCENARIOS[wc.scenario]["public"]
        == SCENARIOS[wc.scenario]["private"],
        checkpoint=lambda wc: f"{D.distill.folder(wc.scenario, wc.teacher, wc.mech)}/student.resume.pt",
    script:
        "../scripts/distill_student.py"
