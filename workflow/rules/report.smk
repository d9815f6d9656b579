# Reports: the privacy ledger, the paper tables (views of the methods' result rows), compare.csv.


rule partition_summary:
    input:
        expand(res("partitions/{scenario}/summary.json"), scenario=SCENARIOS),
    output:
        res("partitions.csv"),
    log:
        res("logs/partition_summary.log"),
    benchmark:
        res("benchmarks/partition_summary.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("partition_summary.py"),
    script:
        "../scripts/partition_summary.py"


rule privacy_ledger:
    input:
        D.release_files(),
    output:
        report(
            res("privacy_ledger.csv"),
            caption="../report/privacy_ledger.rst",
            category="Privacy",
        ),
    log:
        res("logs/privacy_ledger.log"),
    benchmark:
        res("benchmarks/privacy_ledger.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("privacy_ledger.py"),
        delta_ref=config["privacy"]["delta_ref"],
        preset=config["preset"],
    script:
        "../scripts/privacy_ledger.py"


rule table2:
    input:
        results=[
            f"{D.fedmd.table2_dir(*row)}/result.json" for row in D.fedmd.table2_rows()
        ],
        rounds=[
            f"{D.fedmd.table2_dir(*row)}/rounds.parquet"
            for row in D.fedmd.table2_rows()
        ],
        centralized=[f"{d}/result.json" for _, _, d in D.fedmd.centralized_runs()],
        repeats=[
            f"{D.fedmd.table2_dir(*row)}/result.json"
            for row in D.fedmd.table2_repeats()
        ],
        repeat_rounds=[
            f"{D.fedmd.table2_dir(*row)}/rounds.parquet"
            for row in D.fedmd.table2_repeats()
        ],
    output:
        csv=report(
            res("table2.csv"), caption="../report/table2.rst", category="Paper 002"
        ),
        rounds=res("table2_rounds.parquet"),
    log:
        res("logs/table2.log"),
    benchmark:
        res("benchmarks/table2.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code("table2.py"),
        delta_ref=config["privacy"]["delta_ref"],
        datasets={
            label: {**spec, "party_archs": D.fedmd.party_archs(spec["scenario"])}
            for label, spec in D.TABLE2.items()
        },
        rows=D.fedmd.table2_rows(),
        centralized=[(label, arch) for label, arch, _ in D.fedmd.centralized_runs()],
        repeats=[(label, run) for label, run, _ in D.fedmd.table2_repeats()],
    script:
        "../scripts/table2.py"


rule table_rknn:
    input:
        [f"{d}/result.json" for _, d in D.distill.rknn_rows()],
    output:
        report(
            res("table_rknn.csv"),
            caption="../report/table_rknn.rst",
            category="Paper 003",
        ),
    log:
        res("logs/table_rknn.log"),
    benchmark:
        res("benchmarks/table_rknn.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table_rknn.py"),
        delta_ref=config["privacy"]["delta_ref"],
        labels=[row["dataset"] for row, _ in D.distill.rknn_rows()],
    script:
        "../scripts/table_rknn.py"


rule compare:
    input:
        D.result_files(),
    output:
        report(
            res("compare.csv"), caption="../report/compare.rst", category="All methods"
        ),
    log:
        res("logs/compare.log"),
    benchmark:
        res("benchmarks/compare.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("compare.py"),
        delta_ref=config["privacy"]["delta_ref"],
    script:
        "../scripts/compare.py"


rule claims:
    input:
        unpack(lambda wc: D.claim_sources()),
    output:
        report(res("claims.csv"), caption="../report/claims.rst", category="Claims"),
    log:
        res("logs/claims.log"),
    benchmark:
        res("benchmarks/claims.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("claims.py"),
        preset=config["preset"],
    script:
        "../scripts/claims.py"


rule reproduction_figure:
    input:
        res("figures/{name}.png"),
    output:
        f"docs/reproduction/{config['preset']}/figures/{{name}}.png",
    log:
        res("logs/reproduction_figure/{name}.log"),
    benchmark:
        res("benchmarks/reproduction_figure/{name}.tsv")
    wildcard_constraints:
        name="p00[0-9]_[a-z0-9_]+|compare_[a-z0-9_-]+|audit",
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=200,
        runtime=5,
    shell:
        "(cp {input} {output}.tmp && mv {output}.tmp {output}) 2> {log}"


rule reproduction_page:
    input:
        unpack(D.page_inputs),
    output:
        f"docs/reproduction/{config['preset']}/{{page}}.md",
    log:
        res("logs/reproduction_page/{page}.log"),
    benchmark:
        res("benchmarks/reproduction_page/{page}.tsv")
    wildcard_constraints:
        page="|".join(D.PAGES + D.EXTRA_PAGES),
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("reproduction_page.py"),
        module=lambda wc: page_module(wc.page),
        preset=config["preset"],
        audit_fractions=config["audit"]["fractions"],
        commands={
            name: D.preset_command(target)
            for name, target in page_command_targets(res, config["preset"]).items()
        },
    script:
        "../scripts/reproduction_page.py"


rule figure_compare:
    input:
        res("compare.csv"),
    output:
        png=report(
            res("figures/compare_{scenario}.png"),
            caption="../report/figure_compare.rst",
            category="All methods",
        ),
        svg=res("figures/compare_{scenario}.svg"),
        data=res("figures/compare_{scenario}.csv"),
    log:
        res("logs/figures/compare_{scenario}.log"),
    benchmark:
        res("benchmarks/figures/compare_{scenario}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_compare.py"),
    script:
        "../scripts/figure_compare.py"
