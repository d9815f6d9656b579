# The privacy audit (docs/audit.md): the one region of the DAG that may read private data and the
# canary list.  audit_partition (the dealer) deals an audited variant of a scenario, whose party 0 also
# holds the canaries; the method then runs on it through its ordinary rules; the audit_* rules score
# the canaries from the release alone; audit_table and figure_audit report.  pipelib.boundary gives
# these rules the role "audit" and lets no other rule read a canary list.


use rule partition as audit_partition with:
    output:
        assignment=res("partitions/{scenario}/assignment.parquet"),
        public=res("partitions/{scenario}/public.parquet"),
        test=res("partitions/{scenario}/test.parquet"),
        summary=res("partitions/{scenario}/summary.json"),
        canaries=res("partitions/{scenario}/canaries.parquet"),
    wildcard_constraints:
        scenario=alternatives(D.AUDIT_SCENARIOS) or "NO_AUDIT",


rule audit_distill:
    input:
        unpack(D.audit.distill_inputs),
    output:
        res("audit/distill/{scenario}/{teacher}/{mech}/audit.json"),
    log:
        res("logs/audit/distill/{scenario}/{teacher}/{mech}.log"),
    benchmark:
        res("benchmarks/audit/distill/{scenario}/{teacher}/{mech}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("audit_distill.py"),
        encoder=lambda wc: resolved_encoder(
            D.RKNN["encoders"], D.distill.rknn_teacher(wc.teacher)[0]
        ),
        audit=D.AUDIT,
        fields=lambda wc: {
            "scenario": D.distill.public_side(wc.scenario),
            "audited_scenario": wc.scenario,
            "preset": config["preset"],
            "seed": seed_of(wc.scenario),
        },
    script:
        "../scripts/audit_distill.py"


rule audit_fedmd:
    input:
        unpack(D.audit.fedmd_inputs),
    output:
        res("audit/fedmd/{scenario}/{answer}/{run}/audit.json"),
    log:
        res("logs/audit/fedmd/{scenario}/{answer}/{run}.log"),
    benchmark:
        res("benchmarks/audit/fedmd/{scenario}/{answer}/{run}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("audit_fedmd.py"),
        method=lambda wc: AuditRun.of(wc).audited.method,
        label_offset=lambda wc: raw.dataset(SCENARIOS[wc.scenario]["public"]).classes,
        audit=D.AUDIT,
        fields=lambda wc: {
            "scenario": D.distill.public_side(wc.scenario),
            "audited_scenario": wc.scenario,
            "mechanism": f"{wc.run} ({wc.answer} answers)",
            "preset": config["preset"],
            "seed": seed_of(wc.scenario),
        },
    script:
        "../scripts/audit_fedmd.py"


rule audit_dpsgd:
    input:
        canaries=res("partitions/{scenario}/canaries.parquet"),
        model=res("dpsgd/{scenario}/{arch}/eps{eps}/model.pt"),
        releases=res("dpsgd/{scenario}/{arch}/eps{eps}/releases.json"),
    output:
        res("audit/dpsgd/{scenario}/{arch}/eps{eps}/audit.json"),
    log:
        res("logs/audit/dpsgd/{scenario}/{arch}/eps{eps}.log"),
    benchmark:
        res("benchmarks/audit/dpsgd/{scenario}/{arch}/eps{eps}.tsv")
    wildcard_constraints:
        eps=EPS,
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("audit_dpsgd.py"),
        label_offset=lambda wc: raw.dataset(SCENARIOS[wc.scenario]["public"]).classes,
        audit=D.AUDIT,
        fields=lambda wc: {
            "scenario": D.distill.public_side(wc.scenario),
            "audited_scenario": wc.scenario,
            "mechanism": "dpsgd",
            "preset": config["preset"],
            "seed": seed_of(wc.scenario),
        },
    script:
        "../scripts/audit_dpsgd.py"


rule audit_ldpfl:
    input:
        canaries=res("partitions/{scenario}/canaries.parquet"),
        model=res("ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/model.pt"),
        releases=res("ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/releases.json"),
    output:
        res("audit/ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/audit.json"),
    log:
        res("logs/audit/ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}.log"),
    benchmark:
        res("benchmarks/audit/ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("audit_ldpfl.py"),
        audit=D.AUDIT,
        fields=lambda wc: {
            "scenario": D.distill.public_side(wc.scenario),
            "audited_scenario": wc.scenario,
            "mechanism": f"{wc.flmech} (f{wc.frac}, {wc.rounds} rounds)",
            "preset": config["preset"],
            "seed": seed_of(wc.scenario),
        },
    script:
        "../scripts/audit_ldpfl.py"


rule audit_ldpdl:
    input:
        unpack(D.audit.ldpdl_inputs),
    output:
        res("audit/ldpdl/{scenario}/{run}/audit.json"),
    log:
        res("logs/audit/ldpdl/{scenario}/{run}.log"),
    benchmark:
        res("benchmarks/audit/ldpdl/{scenario}/{run}.tsv")
    wildcard_constraints:
        run=f"{PATE_RUN.pattern}|{LDPDL_RUN.pattern}",
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("audit_ldpdl.py"),
        method=lambda wc: AuditRun.of(wc).audited.method,
        audit=D.AUDIT,
        fields=lambda wc: {
            "scenario": D.distill.public_side(wc.scenario),
            "audited_scenario": wc.scenario,
            "mechanism": wc.run,
            "preset": config["preset"],
            "seed": seed_of(wc.scenario),
        },
    script:
        "../scripts/audit_ldpdl.py"


rule audit_validation:
    output:
        res("audit/validation/{name}/audit.json"),
    log:
        res("logs/audit/validation/{name}.log"),
    benchmark:
        res("benchmarks/audit/validation/{name}.tsv")
    wildcard_constraints:
        name=f"none|rr-eps{EPS}",
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("audit_validation.py"),
        audit=D.AUDIT,
        seed=config["seed"],
        randomness=config["privacy"]["randomness"],
        fields={"preset": config["preset"], "seed": config["seed"]},
    script:
        "../scripts/audit_validation.py"
