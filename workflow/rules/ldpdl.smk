# LDP-DL (paper 004, Algorithm 1; pipelib.methods.ldpdl), and the teachers PATE shares with it:
#   ldpdl_encoder  (public)  the teachers' frozen encoder of a private dataset: a CNN trained on another
#                            labelled dataset (ldpdl.teacher.by_dataset, kind transfer); HOG needs none
#   ldpdl_teachers (owners)  every owner's teacher on its own records (design L<n>: n overlapping owners;
#                            T<n>: PATE's n disjoint teachers, heads on the encoder; S<n>: the same shards,
#                            small CNNs from scratch as PATE trains them; parties: the scenario's parties)
#   ldpdl_plan     (server)  who answers which query slot (each owner at most cap times), the first queries
#   ldpdl_release  (owners)  iteration t: every owner's sanitized answers to the queries assigned to it
#   ldpdl_student  (server)  iteration t: a student on the answers so far, the next queries (AQS/random)
# PATE runs in the distillation stage (distill.smk): distill_votes (every teacher's votes) -> distill_curate
# (GNMax) -> distill_aggregate -> distill_label -> distill_student, teacher pate-{design}-q{queries}.
# Paths: results/ldpdl/{scenario}/teachers-{design}/, .../{ldmech}-eps{eps}-q{nq}-{design}-{qs}/iter-{t}/.
# one run's folder (pipelib.runs.LdpdlRun)
LDPDL_RUN_DIR = f"{{scenario}}/{LDPDL_WILDCARDS}"


wildcard_constraints:
    ldmech=alternatives(vocab.SOFT_LABEL_MECHANISMS),
    eps=EPS,
    nq="[1-9][0-9]*",
    qs="aqs|random",
    iteration="[1-9][0-9]*",
    design="L[1-9][0-9]*|[TS][1-9][0-9]*|parties",
    tdata="[a-z0-9_]+",


rule ldpdl_encoder:
    input:
        # another dataset's labelled train split: none of the owners' records
        train=lambda wc: D.ingested(
            D.ldpdl.teacher_encoder_settings(wc.tdata)["source"]
        )["train"],
    output:
        model=res("ldpdl/encoder-{tdata}/encoder.pt"),
    log:
        res("logs/ldpdl_encoder/{tdata}.log"),
    benchmark:
        res("benchmarks/ldpdl_encoder/{tdata}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.LDPDL["threads"]
    resources:
        mem_mb=8000,
        runtime=D.LDPDL["runtime"],
        gpu=LDPDL_GPUS,
    params:
        code=code("ldpdl_encoder.py"),
        settings=lambda wc: D.ldpdl.teacher_encoder_settings(wc.tdata),
        seed=config["seed"],
        device=D.LDPDL["device"],
        precision=D.LDPDL["precision"],
        checkpoint=lambda wc: res(f"ldpdl/encoder-{wc.tdata}/encoder.resume.pt"),
    script:
        "../scripts/ldpdl_encoder.py"


rule ldpdl_teachers:
    input:
        unpack(lambda wc: D.ldpdl.teacher_encoder_files(wc.scenario, wc.design)),
        parties=lambda wc: [party_table(wc.scenario, i) for i in party_ids(wc.scenario)],
    output:
        teachers=res("ldpdl/{scenario}/teachers-{design}/teachers.npz"),
        info=res("ldpdl/{scenario}/teachers-{design}/teachers.json"),
    log:
        res("logs/ldpdl_teachers/{scenario}/{design}.log"),
    benchmark:
        res("benchmarks/ldpdl_teachers/{scenario}/{design}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.LDPDL["threads"]
    resources:
        mem_mb=8000,
        runtime=D.LDPDL["runtime"],
    params:
        code=code("ldpdl_teachers.py"),
        settings=lambda wc: D.ldpdl.teacher_settings(wc.scenario, wc.design),
        device=D.LDPDL["device"],
        precision=D.LDPDL["precision"],
        records=lambda wc: D.ldpdl.teacher_records(wc.design),
        seed=lambda wc: seed_of(wc.scenario),
    script:
        "../scripts/ldpdl_teachers.py"


rule ldpdl_plan:
    input:
        unpack(public_inputs),
    output:
        plan=res(f"ldpdl/{LDPDL_RUN_DIR}/plan.json"),
        queries=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-1/queries.npy"),
    log:
        res(f"logs/ldpdl_plan/{LDPDL_RUN_DIR}.log"),
    benchmark:
        res(f"benchmarks/ldpdl_plan/{LDPDL_RUN_DIR}.tsv")
    wildcard_constraints:
        design="L[1-9][0-9]*|T[1-9][0-9]*|parties",  # not S<n>: D.PATE's own CNNs answer no LDP-DL run
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("ldpdl_plan.py"),
        owners=lambda wc: D.ldpdl.design_owners(wc.scenario, wc.design),
        per_iteration=lambda wc: D.ldpdl.shape(wc.qs)[0],
        iterations=lambda wc: D.ldpdl.shape(wc.qs)[1],
        seed=lambda wc: seed_of(wc.scenario),
    script:
        "../scripts/ldpdl_plan.py"


rule ldpdl_release:
    input:
        unpack(lambda wc: D.ldpdl.teachers_files(wc.scenario, wc.design)),
        unpack(lambda wc: D.ldpdl.teacher_encoder_files(wc.scenario)),
        plan=res(f"ldpdl/{LDPDL_RUN_DIR}/plan.json"),
        queries=lambda wc: D.ldpdl.queries_of(wc, int(wc.iteration)),
        public=lambda wc: public_inputs(wc)["public"],
    output:
        release=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/answers.npy"),
        guarantee=res(
            f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/answers.guarantee.json"
        ),
        records=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/answers.records.npy"),
    log:
        res(f"logs/ldpdl_release/{LDPDL_RUN_DIR}/iter-{{iteration}}.log"),
    benchmark:
        res(f"benchmarks/ldpdl_release/{LDPDL_RUN_DIR}/iter-{{iteration}}.tsv")
    wildcard_constraints:
        design="L[1-9][0-9]*|T[1-9][0-9]*|parties",  # not S<n>: D.PATE's own CNNs answer no LDP-DL run
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        code=code("ldpdl_release.py"),
        settings=lambda wc: D.ldpdl.teacher_settings(wc.scenario),
        records=lambda wc: D.ldpdl.teacher_records(wc.design),
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/ldpdl_release.py"


rule ldpdl_student:
    input:
        unpack(public_inputs),
        plan=res(f"ldpdl/{LDPDL_RUN_DIR}/plan.json"),
        test=res("partitions/{scenario}/test.parquet"),
        queries=lambda wc: [
            D.ldpdl.queries_of(wc, t) for t in range(1, int(wc.iteration) + 1)
        ],
        releases=lambda wc: [
            f"{D.ldpdl.run_dir(wc)}/iter-{t}/answers.npy"
            for t in range(1, int(wc.iteration) + 1)
        ],
        guarantees=lambda wc: [
            f"{D.ldpdl.run_dir(wc)}/iter-{t}/answers.guarantee.json"
            for t in range(1, int(wc.iteration) + 1)
        ],
        records=lambda wc: [
            f"{D.ldpdl.run_dir(wc)}/iter-{t}/answers.records.npy"
            for t in range(1, int(wc.iteration) + 1)
        ],
    output:
        result=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/result.json"),
        next=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/next.npy"),
        model=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/student.pt"),
        owners=res(f"ldpdl/{LDPDL_RUN_DIR}/iter-{{iteration}}/owners.csv"),
    log:
        res(f"logs/ldpdl_student/{LDPDL_RUN_DIR}/iter-{{iteration}}.log"),
    benchmark:
        res(f"benchmarks/ldpdl_student/{LDPDL_RUN_DIR}/iter-{{iteration}}.tsv")
    wildcard_constraints:
        design="L[1-9][0-9]*|T[1-9][0-9]*|parties",  # not S<n>: D.PATE's own CNNs answer no LDP-DL run
    conda:
        "../envs/pipelib.yaml"
    threads: D.LDPDL["threads"]
    resources:
        mem_mb=4000,
        runtime=D.LDPDL["runtime"],
        gpu=LDPDL_GPUS,
    params:
        code=code("ldpdl_student.py"),
        settings=D.LDPDL["student"],
        loss=D.LDPDL["loss"],
        seed=lambda wc: seed_of(wc.scenario),
        device=D.LDPDL["device"],
        precision=D.LDPDL["precision"],
        preset=config["preset"],
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/ldpdl_student.py"


rule ldpdl_ceiling:
    input:
        unpack(public_inputs),
        test=res("partitions/{scenario}/test.parquet"),
    output:
        result=res("ldpdl/{scenario}/ceiling/result.json"),
    log:
        res("logs/ldpdl_ceiling/{scenario}.log"),
    benchmark:
        res("benchmarks/ldpdl_ceiling/{scenario}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.LDPDL["threads"]
    resources:
        mem_mb=4000,
        runtime=D.LDPDL["runtime"],
        gpu=LDPDL_GPUS,
    params:
        code=code("ldpdl_ceiling.py"),
        settings=D.LDPDL["student"],
        loss=D.LDPDL["loss"],
        queries=D.ldpdl.shape("random")[0],  # S x T
        seed=lambda wc: seed_of(wc.scenario),
        device=D.LDPDL["device"],
        precision=D.LDPDL["precision"],
        preset=config["preset"],
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/ldpdl_ceiling.py"
