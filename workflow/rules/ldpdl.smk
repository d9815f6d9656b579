# LDP-DL (paper 004, Algorithm 1) and PATE on the same teachers (pipelib.methods.ldpdl):
#   ldpdl_teacher  (party)   an owner's teacher on its shard, its softmax on the public pool (kept private)
#   ldpdl_plan     (server)  who answers which query slot, the per-answer epsilon, the first queries
#   ldpdl_release  (owners)  iteration t: every owner's sanitized answers to the queries assigned to it
#   ldpdl_student  (server)  iteration t: a student on the answers so far, the next queries (AQS/random)
#   pate_curate    (curator) GNMax over every owner's teacher vote;  pate_student (server)
# Paths: results/ldpdl/{scenario}/owners/party-{party}/, .../{ldmech}-eps{eps}-q{nq}-{qs}/iter-{t}/,
# .../pate-eps{eps}/.
wildcard_constraints:
    ldmech=alternatives(vocab.SOFT_LABEL_MECHANISMS),
    eps=EPS,
    nq="[1-9][0-9]*",
    qs="aqs|random",
    iteration="[1-9][0-9]*",


rule ldpdl_teacher:
    input:
        party=lambda wc: party_table(wc.scenario, wc.party),
        public=lambda wc: public_inputs(wc)["public"],
    output:
        soft=res("ldpdl/{scenario}/owners/party-{party}/soft.npy"),
        info=res("ldpdl/{scenario}/owners/party-{party}/teacher.json"),
        model=res("ldpdl/{scenario}/owners/party-{party}/teacher.pt"),
    log:
        res("logs/ldpdl_teacher/{scenario}/party-{party}.log"),
    benchmark:
        res("benchmarks/ldpdl_teacher/{scenario}/party-{party}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: LDPDL["threads"]
    resources:
        mem_mb=4000,
        runtime=LDPDL["runtime"],
        gpu=LDPDL_GPUS,
    params:
        code=code("ldpdl_teacher.py"),
        settings=LDPDL["teacher"],
        seed=lambda wc: seed_of(wc.scenario),
        device=LDPDL["device"],
    script:
        "../scripts/ldpdl_teacher.py"


rule ldpdl_plan:
    input:
        unpack(public_inputs),
    output:
        plan=res("ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/plan.json"),
        queries=res("ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-1/queries.npy"),
    log:
        res("logs/ldpdl_plan/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}.log"),
    benchmark:
        res("benchmarks/ldpdl_plan/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("ldpdl_plan.py"),
        owners=lambda wc: SCENARIOS[wc.scenario]["parties"],
        per_iteration=lambda wc: ldpdl_shape(wc.qs)[0],
        iterations=lambda wc: ldpdl_shape(wc.qs)[1],
        seed=lambda wc: seed_of(wc.scenario),
    script:
        "../scripts/ldpdl_plan.py"


rule ldpdl_release:
    input:
        plan=res("ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/plan.json"),
        queries=lambda wc: queries_of(wc, int(wc.iteration)),
        soft=lambda wc: list(owner_files(wc.scenario, "soft.npy").values()),
        info=lambda wc: list(owner_files(wc.scenario, "teacher.json").values()),
    output:
        release=res(
            "ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}/answers.npy"
        ),
        guarantee=res(
            "ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}/answers.guarantee.json"
        ),
    log:
        res(
            "logs/ldpdl_release/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}.log"
        ),
    benchmark:
        res(
            "benchmarks/ldpdl_release/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}.tsv"
        )
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("ldpdl_release.py"),
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/ldpdl_release.py"


rule ldpdl_student:
    input:
        unpack(public_inputs),
        plan=res("ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/plan.json"),
        test=res("partitions/{scenario}/test.parquet"),
        queries=lambda wc: [queries_of(wc, t) for t in range(1, int(wc.iteration) + 1)],
        releases=lambda wc: [
            f"{run_dir(wc)}/iter-{t}/answers.npy"
            for t in range(1, int(wc.iteration) + 1)
        ],
        guarantees=lambda wc: [
            f"{run_dir(wc)}/iter-{t}/answers.guarantee.json"
            for t in range(1, int(wc.iteration) + 1)
        ],
    output:
        result=res(
            "ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}/result.json"
        ),
        next=res(
            "ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}/next.npy"
        ),
        model=res(
            "ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}/student.pt"
        ),
        owners=res(
            "ldpdl/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}/owners.csv"
        ),
    log:
        res(
            "logs/ldpdl_student/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}.log"
        ),
    benchmark:
        res(
            "benchmarks/ldpdl_student/{scenario}/{ldmech}-eps{eps}-q{nq}-{qs}/iter-{iteration}.tsv"
        )
    conda:
        "../envs/pipelib.yaml"
    threads: LDPDL["threads"]
    resources:
        mem_mb=4000,
        runtime=LDPDL["runtime"],
        gpu=LDPDL_GPUS,
    params:
        code=code("ldpdl_student.py"),
        settings=LDPDL["student"],
        loss=LDPDL["loss"],
        seed=lambda wc: seed_of(wc.scenario),
        device=LDPDL["device"],
        preset=config["preset"],
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/ldpdl_student.py"


rule pate_curate:
    input:
        soft=lambda wc: list(owner_files(wc.scenario, "soft.npy").values()),
        info=lambda wc: list(owner_files(wc.scenario, "teacher.json").values()),
    output:
        labels=res("ldpdl/{scenario}/pate-eps{eps}/labels.json"),
        guarantee=res("ldpdl/{scenario}/pate-eps{eps}/labels.guarantee.json"),
    log:
        res("logs/pate_curate/{scenario}/pate-eps{eps}.log"),
    benchmark:
        res("benchmarks/pate_curate/{scenario}/pate-eps{eps}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("pate_curate.py"),
        queries=LDPDL["queries_per_iteration"] * LDPDL["iterations"],
        delta=LDPDL["pate_delta"],
        seed=lambda wc: seed_of(wc.scenario),
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/pate_curate.py"


rule pate_student:
    input:
        unpack(public_inputs),
        labels=res("ldpdl/{scenario}/pate-eps{eps}/labels.json"),
        guarantee=res("ldpdl/{scenario}/pate-eps{eps}/labels.guarantee.json"),
        test=res("partitions/{scenario}/test.parquet"),
    output:
        result=res("ldpdl/{scenario}/pate-eps{eps}/result.json"),
        model=res("ldpdl/{scenario}/pate-eps{eps}/student.pt"),
    log:
        res("logs/pate_student/{scenario}/pate-eps{eps}.log"),
    benchmark:
        res("benchmarks/pate_student/{scenario}/pate-eps{eps}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: LDPDL["threads"]
    resources:
        mem_mb=4000,
        runtime=LDPDL["runtime"],
        gpu=LDPDL_GPUS,
    params:
        code=code("pate_student.py"),
        settings=LDPDL["student"],
        loss=LDPDL["loss"],
        seed=lambda wc: seed_of(wc.scenario),
        device=LDPDL["device"],
        preset=config["preset"],
        randomness=config["privacy"]["randomness"],
    script:
        "../scripts/pate_student.py"


rule table_ldpdl:
    input:
        [e[k] for e in ldpdl_table_entries() for k in ("ldpdl", "pate")],
    output:
        report(
            res("table_ldpdl.csv"),
            caption="../report/table_ldpdl.rst",
            category="Paper 004",
        ),
    log:
        res("logs/table_ldpdl.log"),
    benchmark:
        res("benchmarks/table_ldpdl.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table_ldpdl.py"),
        entries=ldpdl_table_entries(),
        delta_ref=config["privacy"]["delta_ref"],
    script:
        "../scripts/table_ldpdl.py"


rule figure_p004:
    input:
        lambda wc: [
            e["path"] for e in ldpdl_figure_entries() if slug(e["dataset"]) == wc.ldset
        ],
    output:
        png=report(
            res("figures/p004_{ldset}.png"),
            caption="../report/p004.rst",
            category="Paper 004",
            subcategory="Figures",
        ),
        svg=res("figures/p004_{ldset}.svg"),
        data=res("figures/p004_{ldset}.csv"),
    log:
        res("logs/figures/p004_{ldset}.log"),
    benchmark:
        res("benchmarks/figures/p004_{ldset}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p004.py"),
        entries=lambda wc: [
            e for e in ldpdl_figure_entries() if slug(e["dataset"]) == wc.ldset
        ],
    script:
        "../scripts/figure_p004.py"
