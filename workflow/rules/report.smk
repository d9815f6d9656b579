# Reports: the privacy ledger, the paper tables (views of the methods' result rows), compare.csv.


rule partition_summary:
    input:
        expand("results/partitions/{scenario}/summary.json", scenario=SCENARIOS),
    output:
        "results/partitions.csv",
    log:
        "results/logs/partition_summary.log",
    benchmark:
        "results/benchmarks/partition_summary.tsv"
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
        release_files(),
    output:
        "results/privacy_ledger.csv",
    log:
        "results/logs/privacy_ledger.log",
    benchmark:
        "results/benchmarks/privacy_ledger.tsv"
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
        results=[f"{fedmd_dir(*row)}/result.json" for row in table2_rows()],
        rounds=[f"{fedmd_dir(*row)}/rounds.parquet" for row in table2_rows()],
        centralized=[f"{d}/result.json" for _, _, d in centralized_runs()],
    output:
        csv="results/table2.csv",
        rounds="results/table2_rounds.parquet",
    log:
        "results/logs/table2.log",
    benchmark:
        "results/benchmarks/table2.tsv"
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
            label: {**spec, "party_archs": party_archs(spec["scenario"])}
            for label, spec in TABLE2.items()
        },
        rows=table2_rows(),
        centralized=[(label, arch) for label, arch, _ in centralized_runs()],
    script:
        "../scripts/table2.py"


rule table_rknn:
    input:
        [f"{d}/result.json" for _, d in rknn_rows()],
    output:
        "results/table_rknn.csv",
    log:
        "results/logs/table_rknn.log",
    benchmark:
        "results/benchmarks/table_rknn.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table_rknn.py"),
        delta_ref=config["privacy"]["delta_ref"],
        labels=[row["dataset"] for row, _ in rknn_rows()],
    script:
        "../scripts/table_rknn.py"


rule compare:
    input:
        result_files(),
    output:
        "results/compare.csv",
    log:
        "results/logs/compare.log",
    benchmark:
        "results/benchmarks/compare.tsv"
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


rule reproduction_pages:
    input:
        table2="results/table2.csv",
        table_rknn="results/table_rknn.csv",
    output:
        table2=f"docs/reproduction/{config['preset']}/table2.md",
        table_rknn=f"docs/reproduction/{config['preset']}/table_rknn.md",
        headline=f"docs/reproduction/{config['preset']}/headline.md",
    log:
        "results/logs/reproduction_pages.log",
    benchmark:
        "results/benchmarks/reproduction_pages.tsv"
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("reproduction_pages.py"),
        preset=config["preset"],
        commands={
            "table2": preset_command("results/table2.csv"),
            "table_rknn": preset_command("results/table_rknn.csv"),
        },
    script:
        "../scripts/reproduction_pages.py"
